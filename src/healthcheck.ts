// Container health check: exits 0 when GET /.live answers 200 on this machine, 1 otherwise.
// Sends Basic credentials when MONITORING_HTTP_CREDENTIALS is set, so it works either way.
import { healthcheckSettings } from './config/index.js';

const { port, basePath, credentials, tls } = healthcheckSettings();
const headers: Record<string, string> = {};
if (credentials) headers.authorization = `Basic ${Buffer.from(credentials).toString('base64')}`;
if (tls) process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
try {
  const res = await fetch(`${tls ? 'https' : 'http'}://127.0.0.1:${port}${basePath}/.live`, {
    headers, signal: AbortSignal.timeout(2500),
  });
  process.exit(res.status === 200 ? 0 : 1);
} catch {
  process.exit(1);
}
