/**
 * `node bench/profile.ts <scenario> [seconds]`: puts one benchmark scenario
 * under load while V8's sampling profiler runs in the Worker's isolate (over
 * workerd's inspector, on 127.0.0.1), then prints where the isolate's time
 * went, by function and by package, and writes the profile to
 * $TMPDIR/poi-<scenario>.cpuprofile (open it in Chrome DevTools).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../scripts/lib/dev-server.ts";
import { measure } from "./load.ts";
import { runImportGroup } from "./import.ts";
import { buildGroups } from "./scenarios.ts";
import { startStack } from "./setup.ts";

type Node = {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
};
type Profile = { nodes: Node[]; samples: number[]; timeDeltas: number[] };

const [key, secondsArg] = process.argv.slice(2);
if (!key) {
  console.error("usage: node bench/profile.ts <scenario key, e.g. first-page> [seconds]");
  process.exit(64);
}
const seconds = Number(secondsArg ?? 5);

/** A minimal Chrome DevTools Protocol session over the inspector's WebSocket. */
async function devtools(url: string) {
  const socket = new WebSocket(url);
  await new Promise((resolve, reject) => {
    socket.addEventListener("open", resolve, { once: true });
    socket.addEventListener("error", reject, { once: true });
  });
  let next = 0;
  const pending = new Map<number, (result: unknown) => void>();
  socket.addEventListener("message", (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown };
    if (message.id !== undefined) pending.get(message.id)?.(message.result);
  });
  return {
    send: <T>(method: string, params: Record<string, unknown> = {}) =>
      new Promise<T>((resolve) => {
        const id = ++next;
        pending.set(id, resolve as (result: unknown) => void);
        socket.send(JSON.stringify({ id, method, params }));
      }),
    close: () => socket.close(),
  };
}

/**
 * Which source file each line of the (unminified) bundle came from, read from
 * esbuild's `// path` section comments.
 */
function sourceOfLines(bundlePath: string): (line: number) => string {
  const lines = readFileSync(bundlePath, "utf8").split("\n");
  const owner: string[] = [];
  let current = "(bundle)";
  for (const line of lines) {
    const match = line.match(/^\/\/ ((?:node_modules|src)\/\S+)$/);
    if (match) current = match[1]!;
    owner.push(current);
  }
  return (line) => owner[line] ?? "(native)";
}

/** Self time per function and per source file, as percentages of all samples. */
function summarize(profile: Profile, sourceOf: (line: number) => string, requests: number) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const fns = new Map<string, number>();
  const files = new Map<string, number>();
  for (const [id, time] of self) {
    const { functionName, lineNumber, url } = byId.get(id)!.callFrame;
    // Only the bundle's own frames map to our sources; others are the runtime's built-in modules.
    const file = url.endsWith("index.js") ? sourceOf(lineNumber) : url ? url : "(runtime)";
    const name = `${functionName || "(anonymous)"}  ${file}`;
    fns.set(name, (fns.get(name) ?? 0) + time);
    const pkg = file.replace(/^node_modules\/((?:@[^/]+\/)?[^/]+).*/, "$1");
    files.set(pkg, (files.get(pkg) ?? 0) + time);
  }
  const idle = [...self]
    .filter(([id]) => byId.get(id)!.callFrame.functionName === "(idle)")
    .reduce((a, [, t]) => a + t, 0);
  console.log(
    `isolate busy ${((total - idle) / 1000 / requests).toFixed(3)} ms per request ` +
      `(${((total - idle) / 1000).toFixed(0)} ms over ${requests} requests; idle ${((100 * idle) / total).toFixed(0)}%)`,
  );
  const pct = (t: number) => ((100 * t) / total).toFixed(1).padStart(5) + "%";
  console.log(`\nself time by package or source file:`);
  for (const [name, time] of [...files].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`${pct(time)}  ${name}`);
  console.log(`\nself time by function, top 30 of ${fns.size}:`);
  for (const [name, time] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(`${pct(time)}  ${name}`);
}

const dir = mkdtempSync(join(tmpdir(), "poi-profile-"));
const inspectorPort = await freePort();
// PROFILE_SHARDS=1: the same stack with two more shards, the accounts on SHARD_1 (as the shards group runs it).
const shards = process.env.PROFILE_SHARDS === "1" ? ["SHARD_1", "SHARD_2"] : undefined;
const stack = await startStack(dir, { inspectorPort, minify: false, publicMaps: true, shards });
try {
  const groups = await buildGroups(stack.rt, stack.seeded, stack.token, dir);
  const target = groups.flatMap((g) => g.targets).find((t) => t.key === key);
  if (!target && key !== "import") {
    throw new Error(`no scenario ${key}; one of import, ${groups.flatMap((g) => g.targets.map((t) => t.key))}`);
  }
  const targets = (await (await fetch(`http://127.0.0.1:${inspectorPort}/json/list`)).json()) as {
    id: string;
    title: string;
    webSocketDebuggerUrl: string;
  }[];
  // The isolate that answers the scenario: a baseline Worker's, or the service's (with or without the limiter).
  const worker = key.startsWith("bare-")
    ? "bare"
    : key === "constant"
      ? "constant"
      : key.endsWith("-unlimited")
        ? "unlimited"
        : "api";
  const api = targets.find((t) => t.title.includes(worker) || t.id.includes(worker));
  if (!api) throw new Error(`no inspector target for the Worker: ${JSON.stringify(targets)}`);
  const session = await devtools(api.webSocketDebuggerUrl.replace("localhost", "127.0.0.1"));
  await session.send("Profiler.enable");
  await session.send("Profiler.setSamplingInterval", { interval: 100 });
  let requests: number;
  let profile!: Profile;
  if (target) {
    await measure({ ...target.request, connections: 16, seconds: 1 });
    await session.send("Profiler.start");
    const result = await measure({ ...target.request, connections: 16, seconds });
    ({ profile } = await session.send<{ profile: Profile }>("Profiler.stop"));
    console.log(`${target.label}: ${result.rps.toFixed(0)} req/s, p50 ${result.p50.toFixed(2)} ms (while profiling)`);
    requests = result.requests;
  } else {
    // The import of the import group (bench/import.ts) at BENCH_IMPORT_PLACES, 20,000 by default; a request is a batch.
    const places = Number(process.env.BENCH_IMPORT_PLACES ?? 20_000);
    const db = (await stack.rt.mf.getD1Database("DB", "api")) as never;
    const result = await runImportGroup(stack.rt, db, dir, places, console.log, async (run) => {
      await session.send("Profiler.start");
      const value = await run();
      ({ profile } = await session.send<{ profile: Profile }>("Profiler.stop"));
      return value;
    });
    requests = Math.ceil(places / 1000);
    console.log(`import: ${result.import.placesPerSecond.toFixed(0)} places/s, ${result.ratio.toFixed(2)} of bare`);
  }
  session.close();
  const saved = join(tmpdir(), `poi-${key}.cpuprofile`);
  writeFileSync(saved, JSON.stringify(profile));
  console.log(`profile written to ${saved}`);
  summarize(profile, sourceOfLines(stack.bundle.path), requests);
} finally {
  await stack.rt.dispose();
  rmSync(dir, { recursive: true, force: true });
}
