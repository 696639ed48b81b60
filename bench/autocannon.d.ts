/** The part of autocannon's API the load generator uses (the package ships no types). */
declare module "autocannon" {
  type Options = {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    connections?: number;
    duration?: number;
    timeout?: number;
    /** Replaces `[<id>]` in the request (URL included) with a fresh id per request. */
    idReplacement?: boolean;
    /** The requests each connection sends in turn; `setupRequest` rebuilds one before each time it is sent. */
    requests?: { setupRequest?: <R extends { body?: string | Buffer }>(request: R) => R }[];
    /** Called with each connection's client; `headers` fires with the parser's raw header list. */
    setupClient?: (client: Client) => void;
  };
  type Client = {
    on(event: "headers", listener: (info: { statusCode: number; headers: string[] }) => void): void;
  };
  type Result = {
    duration: number;
    requests: { total: number; average: number };
    non2xx: number;
    errors: number;
    timeouts: number;
    statusCodeStats?: Record<string, { count: number }>;
  };
  type Instance = {
    on(
      event: "response",
      listener: (client: unknown, statusCode: number, bytes: number, responseTime: number) => void,
    ): void;
  };
  function autocannon(options: Options, callback: (error: Error | null, result: Result) => void): Instance;
  export default autocannon;
}
