// The part of autocannon 8's API the runner uses (the package ships no types).
declare module 'autocannon' {
  export interface Histogram {
    readonly average: number;
    readonly mean: number;
    readonly stddev: number;
    readonly min: number;
    readonly max: number;
    readonly p50: number;
    readonly p90: number;
    readonly p97_5: number;
    readonly p99: number;
    readonly p99_9: number;
  }
  export interface RequestOptions {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    /** A function, or in workers mode the absolute path of a CommonJS module exporting one. */
    setupRequest?: string | ((request: Record<string, unknown>, context: Record<string, unknown>) => unknown);
    onResponse?: string | ((status: number, body: string, context: Record<string, unknown>) => void);
  }
  export interface Options extends RequestOptions {
    /** Several: the connections go to them in turn (S3n's two nodes). */
    url: string | string[];
    connections?: number;
    pipelining?: number;
    duration?: number;
    amount?: number;
    /** ms between samples; with `amount` also how soon the end of the run is noticed. */
    sampleInt?: number;
    workers?: number;
    overallRate?: number;
    timeout?: number;
    requests?: RequestOptions[];
    [extra: string]: unknown;
  }
  export interface Result {
    readonly duration: number;
    readonly errors: number;
    readonly timeouts: number;
    readonly non2xx: number;
    readonly totalCompletedRequests: number;
    readonly statusCodeStats: Record<string, { count: number }>;
    readonly latency: Histogram;
    readonly requests: Histogram;
  }
  export interface Instance extends Promise<Result> {
    stop(): void;
  }
  function autocannon(options: Options): Instance;
  export default autocannon;
}
