// The admin area: logins, session JWTs, who may reach it, single sign-on.
import { parseRateRule, type RateRule } from '../parse.js';
import { bool, cidrs, type Parser, secs, str, uint, v } from './variable.js';

const rule: Parser<RateRule | null> = (s) => (s.trim() === '' ? null : parseRateRule(s, 'ip'));

export const ADMIN_VARIABLES = {
  PASSWORD_LOGIN_ENABLED: v('Admin area', '1', bool, 'Password login to the console and the admin API (docs/admin.md). 0 = every login is refused with 403 LOGIN_DISABLED (sessions already issued stay valid until they expire or are revoked).'),
  PASSWORD_MIN_LENGTH: v('Admin area', '8', uint(1, 1024), 'Minimum length of an admin password (at most 1024).'),
  DEFAULT_ROOT_PASSWORD: v('Admin area', '', str, 'Password of the `root` user created at first start; it must be changed at the first login. Empty = a random one, written once to the log (warn level). Later starts leave root alone (`npm run cli -- users reset-password root` resets it).', true),
  JWT_ISSUER: v('Admin area', 'palisade', str, 'Issuer (iss) of session JWTs; tokens of another issuer are refused.'),
  JWT_TTL: v('Admin area', '24h', secs, 'Lifetime of a session JWT (and of its cookie).'),
  APP_IP_WHITELIST: v('Admin area', '', cidrs, 'IPs/CIDRs allowed to reach the console and the admin API (client IP after X_FORWARDED_FOR_TRUSTED); others get 403 ADMIN_IP_FORBIDDEN. Empty = unrestricted.'),
  ADMIN_LOGIN_RATE_LIMIT: v('Admin area', '20/15m(block=15m)', rule, 'Login attempts per client IP (rate-rule syntax; the IPv6 /64 counts as one); past it, 429 RATE_LIMITED with Retry-After. Empty disables.'),
  ADMIN_LOGIN_USER_RATE_LIMIT: v('Admin area', '5/15m(block=15m)', rule, 'Login attempts per username, from any IP: the lockout of one account under a password-guessing attack. Empty disables.'),
  SSO_AZURE: v('Admin area', '', str, 'OIDC configuration (Enterprise; parsed, not implemented).', true),
  SSO_GOOGLE: v('Admin area', '', str, 'OIDC configuration (Enterprise; parsed, not implemented).', true),
  SSO_KEYCLOAK: v('Admin area', '', str, 'OIDC configuration (Enterprise; parsed, not implemented).', true),
  SSO_OKTA: v('Admin area', '', str, 'OIDC configuration (Enterprise; parsed, not implemented).', true),
  SSO_LDAP: v('Admin area', '', str, 'LDAP configuration (Enterprise; parsed, not implemented).', true),
} as const;
