/**
 * A real webhook receiver for the tests (vitest globalSetup, in Node): an
 * HTTP server on 127.0.0.1 that records every POST to /hooks/{name} and
 * answers it with the status set for that name (200 unless PUT
 * /status/{name}/{code}); GET /received/{name} returns what it recorded.
 * The Worker reaches it over the network like any receiver; its port is
 * given to the tests as `inject("receiverPort")`.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { TestProject } from "vitest/node";

type Received = { headers: Record<string, string>; body: string };

declare module "vitest" {
  export interface ProvidedContext {
    receiverPort: number;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const received = new Map<string, Received[]>();
  const statuses = new Map<string, number>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const [, kind, name, code] = (request.url ?? "").split("/");
      if (request.method === "POST" && kind === "hooks" && name) {
        const headers = Object.fromEntries(Object.entries(request.headers).map(([key, value]) => [key, String(value)]));
        received.set(name, [...(received.get(name) ?? []), { headers, body: Buffer.concat(chunks).toString() }]);
        const status = statuses.get(name) ?? 200;
        response.writeHead(status, { "Content-Type": "text/plain" }).end(status < 300 ? "ok" : "down ".repeat(100));
      } else if (request.method === "PUT" && kind === "status" && name && code) {
        statuses.set(name, Number(code));
        response.writeHead(204).end();
      } else if (request.method === "GET" && kind === "received" && name) {
        response.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(received.get(name) ?? []));
      } else {
        response.writeHead(404).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  project.provide("receiverPort", (server.address() as AddressInfo).port);
  return () => new Promise((resolve) => server.close(() => resolve()));
}
