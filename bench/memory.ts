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

export type Receiver = "api" | "bare-upload" | "bare-sink";

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
};

const LABELS: Record<Receiver, string> = {
  api: "POST /v3.0/pinpoints with media_file",
  "bare-upload": "bare Worker: request.json(), Uint8Array.fromBase64, R2 put, D1 insert",
  "bare-sink": "bare Worker: request.arrayBuffer() only",
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
  for (const receiver of ["api", "bare-upload", "bare-sink"] as const) {
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
              new URL(receiver === "bare-upload" ? `/upload?account=${accountA}` : "/sink", rt.bare),
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
  const api = receivers[0]!;
  return {
    payloadBytes,
    requestBodyBytes: Buffer.byteLength(body),
    receivers,
    peakAddedBytes: api.coldAddedBytes,
    peakAddedVsPayload: api.coldAddedBytes / payloadBytes,
  };
}
