/**
 * Memory of an upload: workerd's resident set (VmRSS) before a request and its
 * peak while the request is handled (VmHWM, reset before each request, with
 * 2 ms sampling as a cross-check), for a 10 MiB image sent as base64 JSON.
 */
import { writeFileSync } from "node:fs";
import { memoryOf, type Runtime } from "./runtime.ts";
import { fakePng, pinpointBody } from "./scenarios.ts";

function resetPeak(pid: number): boolean {
  try {
    // "5" resets the peak RSS (VmHWM) to the current RSS (proc(5), clear_refs).
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

/** Peak resident memory of workerd while one upload is received and handled, above its idle level. */
async function uploadPeak(pid: number, url: URL, body: string, headers: Record<string, string>) {
  await new Promise((r) => setTimeout(r, 300));
  const idle = memoryOf(pid).rss;
  const exact = resetPeak(pid);
  let sampled = idle;
  const sampler = setInterval(() => {
    sampled = Math.max(sampled, memoryOf(pid).rss);
  }, 2);
  const response = await fetch(url, { method: "POST", headers, body });
  const text = await response.text();
  clearInterval(sampler);
  const peak = Math.max(sampled, exact ? memoryOf(pid).hwm : 0);
  return {
    status: response.status,
    idleBytes: idle,
    peakBytes: peak,
    addedBytes: peak - idle,
    detail: text.slice(0, 200),
  };
}

export type Receiver = "api" | "bare-upload" | "bare-stream" | "bare-stream-nor2" | "bare-sink";

export type UploadMemory = {
  receiver: Receiver;
  /** What the receiver does with the body. */
  label: string;
  /** Each upload in turn; the first lands in a fresh isolate (the worst case), later ones reuse freed heap. */
  uploads: ReturnType<typeof uploadPeak> extends Promise<infer T> ? T[] : never;
  coldAddedBytes: number;
  warmAddedBytes: number;
};

export type MemoryReport = {
  payloadBytes: number;
  requestBodyBytes: number;
  receivers: UploadMemory[];
  /** The service's cold (first-upload) peak over its idle level, and as a multiple of the payload. */
  peakAddedBytes: number;
  peakAddedVsPayload: number;
  /** What the local R2 emulator adds for the put (streaming bare Worker with and without it). */
  r2EmulatorBytes: number;
  /** The service's cold peak less the R2 emulator's share: the Worker's own. */
  workerAddedBytes: number;
};

const bareRoutes: Record<Exclude<Receiver, "api">, string> = {
  "bare-upload": "/upload?account={account}",
  "bare-stream": "/upload-stream?account={account}",
  "bare-stream-nor2": "/upload-stream?account={account}&r2=no",
  "bare-sink": "/sink",
};

const RECEIVERS = ["api", "bare-upload", "bare-stream", "bare-stream-nor2", "bare-sink"] as const;

const LABELS: Record<Receiver, string> = {
  api: "POST /v3.0/pinpoints with media_file",
  "bare-upload": "bare Worker: request.json(), Uint8Array.fromBase64, R2 put, D1 insert",
  "bare-stream": "bare Worker: base64 decoded while streaming in, R2 put, D1 insert",
  "bare-sink": "bare Worker: request.arrayBuffer() only",
  "bare-stream-nor2": "bare Worker: base64 decoded while streaming in, D1 insert, no R2 put",
};

/**
 * Peak memory workerd adds while handling a 10 MiB upload, for the service and
 * for two bare Workers doing less, each in a runtime of its own so that no
 * receiver inherits heap another one grew. `start` gives a fresh seeded stack.
 */
export async function measureMemory(
  start: () => Promise<{ rt: Runtime; token: string; seeded: { accountA: number } }>,
  uploadsPerReceiver = 3,
): Promise<MemoryReport> {
  const payloadBytes = 10 * 1024 * 1024;
  const body = pinpointBody(fakePng(payloadBytes));
  const receivers: UploadMemory[] = [];
  for (const receiver of RECEIVERS) {
    const {
      rt,
      token,
      seeded: { accountA },
    } = await start();
    try {
      if (rt.workerdPid === null) throw new Error("workerd's process was not found");
      const [url, headers] =
        receiver === "api"
          ? [
              new URL("/v3.0/pinpoints", rt.api),
              { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
            ]
          : [
              new URL(bareRoutes[receiver].replace("{account}", String(accountA)), rt.bare),
              { "Content-Type": "application/json" },
            ];
      const uploads = [];
      for (let i = 0; i < uploadsPerReceiver; i++) uploads.push(await uploadPeak(rt.workerdPid, url, body, headers));
      const failed = uploads.find((u) => u.status >= 300);
      if (failed) throw new Error(`${receiver} upload: ${failed.status} ${failed.detail}`);
      receivers.push({
        receiver,
        label: LABELS[receiver],
        uploads,
        coldAddedBytes: uploads[0]!.addedBytes,
        warmAddedBytes: uploads[uploads.length - 1]!.addedBytes,
      });
    } finally {
      await rt.dispose();
    }
  }
  const cold = (receiver: Receiver) => receivers.find((r) => r.receiver === receiver)!.coldAddedBytes;
  // Miniflare's R2 runs inside the same workerd process; deployed, it is not the Worker's memory.
  const r2EmulatorBytes = cold("bare-stream") - cold("bare-stream-nor2");
  return {
    payloadBytes,
    requestBodyBytes: Buffer.byteLength(body),
    receivers,
    peakAddedBytes: cold("api"),
    peakAddedVsPayload: cold("api") / payloadBytes,
    r2EmulatorBytes,
    workerAddedBytes: cold("api") - r2EmulatorBytes,
  };
}
