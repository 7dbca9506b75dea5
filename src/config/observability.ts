// Logs, the access log, the monitoring routes' access rules, and OpenTelemetry export.
import { bool, cidrs, ms, oneOf, type Parser, str, url, v } from './variable.js';

export const DEFAULT_MONITORING_WHITELIST =
  '10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,127.0.0.1/32,::1/128,fd00::/8,100.64.0.0/10';

const credentials: Parser<{ user: string; password: string } | null> = (s) => {
  if (s === '') return null;
  const i = s.indexOf(':');
  if (i < 1 || i === s.length - 1) throw new Error('must be user:password');
  return { user: s.slice(0, i), password: s.slice(i + 1) };
};

export const OBSERVABILITY_VARIABLES = {
  LOG_LEVEL: v('Logs and monitoring', 'info', oneOf('trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'), 'Log level.'),
  LOG_FORMAT: v('Logs and monitoring', 'json', oneOf('json', 'plain'), 'Log format on stdout.'),
  ACCESS_LOG_ENABLED: v('Logs and monitoring', '1', bool, 'Access log (one line per request) and per-request analytics.'),
  ACCESS_LOG_ANONYMIZE_IP_ADDRESS: v('Logs and monitoring', '1', bool, 'Anonymize IPs in the access log (IPv4 /24, IPv6 /48).'),
  MONITORING_IP_WHITELIST: v('Logs and monitoring', DEFAULT_MONITORING_WHITELIST, cidrs, 'IPs/CIDRs allowed to reach /.health, /.ready, /.live, /.logs, /.metrics.'),
  MONITORING_HTTP_CREDENTIALS: v('Logs and monitoring', '', credentials, 'user:password; when set, HTTP Basic auth is required instead of the whitelist (and allows access from anywhere).', true),
  OTEL_EXPORTER_OTLP_ENDPOINT: v('Logs and monitoring', '', url, 'OpenTelemetry collector URL (Enterprise in the reference service; parsed, export not implemented yet).'),
  OTEL_SERVICE_NAME: v('Logs and monitoring', 'palisade', str, 'Service name in traces and logs.'),
  OTEL_EXPORTER_OTLP_HEADERS: v('Logs and monitoring', '', str, 'Extra export headers.', true),
  OTEL_EXPORTER_OTLP_TIMEOUT: v('Logs and monitoring', '10000', ms, 'Export timeout (ms).'),
} as const;
