// What createHttpServer is given (src/http/server.ts): where to listen, the request limits, and the
// hooks the application hangs on the request path (flood limit, monitoring access, access log,
// metrics, usage counting).
import type { ErrorCode } from '../errors.js';
import type { Logger } from '../log.js';
import type { ClientIpOptions } from './client-ip.js';
import type { Request } from './request.js';
import type { Route } from './router.js';
import type { Reply } from './types.js';

export interface HttpServerOptions {
  /** Default 8080; 0 picks a free port (single process only). */
  port?: number;
  /** Default '::' is not used: uWS listens on all addresses when no host is given. */
  host?: string;
  /** HTTP2_CERT / HTTP2_KEY file paths: serve TLS with SSLApp. */
  tls?: { certFile: string; keyFile: string } | null;
  /** APP_BASE_PATH ('' = none). */
  basePath?: string;
  /** ALLOWED_HOSTS ([] = any). */
  allowedHosts?: readonly string[];
  /** CORS_ORIGINS ([] = any origin). */
  corsOrigins?: readonly string[];
  clientIp: ClientIpOptions;
  /** Default REQUEST_BODY_LIMIT 64 KB. */
  bodyLimit?: number;
  /** Default 10 s: a body not complete by then is answered 408. */
  requestTimeoutMs?: number;
  /** Access check of monitoring routes; returns null when allowed, else the error code. */
  monitoringAccess?: (req: Request) => ErrorCode | null;
  /** Runs before routing (flood limit); a Reply short-circuits. `exempt` is true for allowed monitoring callers. */
  beforeRoute?: (req: Request, exempt: boolean) => Reply | undefined | Promise<Reply | undefined>;
  /** Each error answer's code (metrics of store failures). */
  onErrorCode?: (code: ErrorCode) => void;
  /** A request shaped like HTTP request smuggling (e.g. a non-numeric Content-Length) was refused. */
  onMalformed?: (req: Request) => void;
  /** With each response, just before it is written (access log, metrics). */
  onResponse?: (req: Request, status: number, route: Route | undefined) => void;
  /**
   * As each reply is written: after uWS has its status and headers and before it is given the
   * body, the last part; what runs after it until the bytes reach the kernel is uWS's own code.
   * Usage is counted here (src/usage/usage-ledger.ts): before the client can have the whole
   * response, so none it received goes uncounted, and as late as that allows, so that a process
   * killed in between has counted at most the replies it was writing at that instant.
   */
  onWrite?: (req: Request) => void;
  logger: Logger;
}
