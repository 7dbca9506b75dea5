// The admin area: logins, session JWTs, who may reach it, single sign-on.
import { bool, cidrs, secs, str, uint, v } from './variable.js';

export const ADMIN_VARIABLES = {
  PASSWORD_LOGIN_ENABLED: v('Admin area', '1', bool, 'Password login to the admin area.'),
  PASSWORD_MIN_LENGTH: v('Admin area', '8', uint(1, 1024), 'Minimum admin password length.'),
  DEFAULT_ROOT_PASSWORD: v('Admin area', '', str, 'Initial root password (must be changed after first login); empty = generated and logged once.', true),
  JWT_ISSUER: v('Admin area', 'palisade', str, 'Issuer in session JWTs.'),
  JWT_TTL: v('Admin area', '24h', secs, 'Lifetime of a session JWT.'),
  APP_IP_WHITELIST: v('Admin area', '', cidrs, 'IPs/CIDRs allowed to use the admin area; empty = unrestricted.'),
  SSO_AZURE: v('Admin area', '', str, 'OIDC configuration (Enterprise; parsed, not implemented).', true),
  SSO_GOOGLE: v('Admin area', '', str, 'OIDC configuration (Enterprise; parsed, not implemented).', true),
  SSO_KEYCLOAK: v('Admin area', '', str, 'OIDC configuration (Enterprise; parsed, not implemented).', true),
  SSO_OKTA: v('Admin area', '', str, 'OIDC configuration (Enterprise; parsed, not implemented).', true),
  SSO_LDAP: v('Admin area', '', str, 'LDAP configuration (Enterprise; parsed, not implemented).', true),
} as const;
