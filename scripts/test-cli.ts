/**
 * What a newcomer sees from the command-line tools (`npm run test:cli`, part
 * of `npm test`):
 * - `npm run import` / `export` against a service that is not there name the
 *   URL they tried and how to point them elsewhere, not just "fetch failed";
 * - `npm run backup -- --help` prints the usage, and a wrong option the usage
 *   too, with exit status 2;
 * - data files a reader keeps in the checkout (GeoJSON, CSV, an import's
 *   state) are left alone by Prettier's check;
 * - `npm start` on a fresh state shows the credentials within its first
 *   screen (the migrations are one line, not a table per migration);
 * - `npm run people`'s commands, as docs/people-and-roles.md gives them, make
 *   people who sign in to the running service (POST /v3.0/auth/sign-in) and
 *   call /v3.0 with the token of their session; a removed member's token
 *   stops; its reset link sets a password; wrong input is refused with the
 *   documented exit codes and messages.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { commands, shellBlock } from "./lib/doc-blocks.ts";
import { keepingLocalFiles, LOCAL_STARTUP_MS, saveLocalFiles, startLocal, type DevServer } from "./lib/dev-server.ts";
import { personToken, signIn, SignInError } from "./lib/sign-in.ts";
import { ROOT } from "./lib/wrangler.ts";

const scratch = mkdtempSync(join(tmpdir(), "poi-cli-test-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

const node = (args: string[]) => spawnSync(process.execPath, args, { cwd: ROOT, encoding: "utf8", timeout: 60_000 });

/** A port nothing listens on: one the system just gave out and took back. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

test("import and export name the URL they could not reach and how to change it", async () => {
  const base = `http://127.0.0.1:${await closedPort()}`;
  const file = join(scratch, "places.geojson");
  writeFileSync(file, '{"type":"FeatureCollection","features":[]}');
  for (const args of [
    ["scripts/import.ts", file],
    ["scripts/export.ts", join(scratch, "out.geojson")],
  ]) {
    const run = node([...args, "--base", base, "--client-id", "id", "--client-secret", "secret"]);
    assert.equal(run.status, 1, run.stderr);
    assert.match(run.stderr, new RegExp(`Could not reach the service at ${base.replaceAll(".", "\\.")}`));
    assert.match(run.stderr, /--base URL or POI_BASE_URL/);
    // The hint pastes as it is: npm passes options on to the script only after `--`.
    assert.match(run.stderr, /\(npm start -- --port N serves http:\/\/localhost:N;/);
    assert.doesNotMatch(run.stderr, /^fetch failed$/m);
  }
});

test("data files a reader keeps in the checkout are not checked by Prettier (npm run check)", async () => {
  const { getFileInfo } = await import("prettier");
  const data = ["places.geojson", "backup.csv", "places.geojson.import-state.json", "docs/tile.geojson"];
  for (const name of data) {
    const info = await getFileInfo(join(ROOT, name), {
      ignorePath: [join(ROOT, ".gitignore"), join(ROOT, ".prettierignore")],
    });
    assert.equal(info.ignored, true, `${name} would be checked`);
  }
  // The project's own files still are.
  for (const name of ["package.json", "docs/api.md", "src/app.ts"]) {
    const info = await getFileInfo(join(ROOT, name), {
      ignorePath: [join(ROOT, ".gitignore"), join(ROOT, ".prettierignore")],
    });
    assert.equal(info.ignored, false, `${name} would not be checked`);
  }
});

test("backup --help prints the usage; a wrong option prints it too, with status 2", () => {
  const help = node(["scripts/backup.ts", "--help"]);
  assert.equal(help.status, 0, help.stderr);
  assert.match(help.stdout, /^Usage: npm run backup -- export FILE/);
  const wrong = node(["scripts/backup.ts", "--bogus"]);
  assert.equal(wrong.status, 2);
  assert.match(wrong.stderr, /Unknown option '--bogus'\.\n\nUsage:/);
});

test("npm start shows the credentials within the first screen on a fresh state", () =>
  keepingLocalFiles(async () => {
    const port = await closedPort();
    const child = spawn(
      process.execPath,
      ["scripts/dev.ts", "--port", String(port), "--persist-to", join(scratch, "state")],
      {
        cwd: ROOT,
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let output = "";
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no credentials after ${LOCAL_STARTUP_MS / 1000} s:\n${output}`)),
          LOCAL_STARTUP_MS,
        );
        const onData = (chunk: Buffer) => {
          output += chunk;
          if (/Client secret/.test(output)) (clearTimeout(timer), resolve());
        };
        child.stdout.on("data", onData);
        child.stderr.on("data", onData);
        child.on("exit", (code) => (clearTimeout(timer), reject(new Error(`npm start exited (${code}):\n${output}`))));
      });
    } finally {
      child.kill("SIGINT");
    }
    const before = output.slice(0, output.indexOf("Client secret")).split("\n");
    assert.ok(before.length < 30, `${before.length} lines before the credentials:\n${output}`);
    assert.match(output, /Applied \d+ migration\(s\) to the local database\./);
  }));

test("the package's engines admit the system Node the README says is enough (20), so npm ci does not warn about it", () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const claimed = /any recent system Node with npm \((\d+) works\)/.exec(readme)?.[1];
  assert.ok(claimed, "README no longer names the system Node that works");
  const { engines } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { engines: { node: string } };
  const minimum = /^>=(\d+)/.exec(engines.node)?.[1];
  assert.ok(
    minimum !== undefined && Number(minimum) <= Number(claimed),
    `engines.node ${engines.node} refuses Node ${claimed}`,
  );
});

describe("npm run people", () => {
  const state = join(scratch, "people-state");
  let server: DevServer;
  let restoreLocalFiles: () => void;

  // npm start on a state of its own: it applies the migrations and serves what the commands write.
  before(async () => {
    restoreLocalFiles = saveLocalFiles();
    server = await startLocal(["--persist-to", state]);
  });
  after(async () => {
    await server?.stop();
    restoreLocalFiles();
  });

  /**
   * `npm run people -- ARGS` (or `npm run clients -- ARGS`) on the suite's state, as bash runs it. Not
   * spawnSync: a blocked event loop misses the service closing an idle keep-alive connection, and the
   * next request on it fails.
   */
  const npmRun = (line: string): Promise<{ status: number | null; stdout: string; stderr: string }> => {
    const [, script, args] = /^npm run (people|clients) -- (.*)$/.exec(line) ?? [];
    assert.ok(script, line);
    const child = spawn(
      "bash",
      ["-euc", `"${process.execPath}" scripts/${script}.ts ${args} --persist-to "${state}"`],
      {
        cwd: ROOT,
        stdio: ["ignore", "pipe", "pipe"],
        timeout: 180_000,
      },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
    return new Promise((resolve) => child.once("close", (status) => resolve({ status, stdout, stderr })));
  };

  /** What a person signed in with `password` reads of the account's pinpoints with their session's token. */
  async function readAs(email: string, password: string): Promise<{ status: number; token: string }> {
    const token = await personToken(await signIn(server.base, email, password));
    const response = await fetch(`${server.base}/v3.0/pinpoints`, { headers: { Authorization: `Bearer ${token}` } });
    await response.body?.cancel();
    return { status: response.status, token };
  }

  test("the commands of docs/people-and-roles.md run as written; the people they make sign in and call /v3.0", async () => {
    const lines = commands(shellBlock("docs/people-and-roles.md", "## People from the command line"));
    assert.ok(lines.length >= 8, lines.join("\n"));
    const printed: string[] = [];
    for (const line of lines) {
      const run = await npmRun(line);
      assert.equal(run.status, 0, `${line}\n${run.stdout}${run.stderr}`);
      printed.push(run.stdout);
    }
    const outputOf = (pattern: RegExp) => printed[lines.findIndex((line) => pattern.test(line))]!;

    // Ana: a generated password, printed once; an editor, so she writes too.
    const ana = /^ {2}password: (\S+) {2}\(generated\)$/m.exec(outputOf(/--email ana@example\.com --role/))?.[1];
    assert.ok(ana, outputOf(/--email ana@example\.com --role/));
    const { status, token } = await readAs("ana@example.com", ana);
    assert.equal(status, 200);
    const created = await fetch(`${server.base}/v3.0/pinpoints`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "Ana's place", latitude: 48.85, longitude: 2.35 }),
    });
    assert.equal(created.status, 201, await created.clone().text());

    // Cleo, in JSON: the fields the docs name, and her generated password signs in.
    const cleo = JSON.parse(outputOf(/cleo@example\.com/)) as Record<string, unknown>;
    assert.deepEqual(Object.keys(cleo).sort(), [
      "account",
      "account_id",
      "email",
      "member_added",
      "name",
      "password",
      "password_generated",
      "person_created",
      "person_id",
      "role",
    ]);
    assert.equal(cleo.password_generated, true);
    assert.equal((await readAs("cleo@example.com", String(cleo.password))).status, 200);

    // Ben was removed: he still signs in (the person stays), but is in no account to act in.
    const ben = await signIn(server.base, "ben@example.com", "a long phrase Ben chose");
    await assert.rejects(personToken(ben), (error: SignInError) => error.status === 400 || error.status === 403);

    // The listing, before the removal, named the three with their roles; the JSON one, after it.
    const listed = outputOf(/^npm run people -- list --account/);
    for (const row of [/^ana@example\.com +Ana Lima +Acme Maps +editor +password /m, /^ben@example\.com .* viewer /m]) {
      assert.match(listed, row);
    }
    const { people } = JSON.parse(outputOf(/list --json/)) as {
      people: { email: string; memberships: { account: string; role: string }[] }[];
    };
    const roles = Object.fromEntries(people.map((p) => [p.email, p.memberships.map((m) => `${m.account}:${m.role}`)]));
    assert.deepEqual(roles["ana@example.com"], ["Acme Maps:editor"]);
    assert.deepEqual(roles["ben@example.com"], []);
    assert.deepEqual(roles["cleo@example.com"], ["Acme Maps:admin"]);
    assert.match(outputOf(/--help/), /^Usage: npm run people -- <command> \[options\]/);

    // The reset link sets Ana's password once; the old one stops working.
    const link = /^ {2}(http:\/\/localhost:8787\/v3\.0\/auth\/password-reset\/[A-Za-z0-9_-]{43})$/m.exec(
      outputOf(/reset --email ana@example\.com/),
    )?.[1];
    assert.ok(link, outputOf(/reset --email ana@example\.com/));
    const reset = () =>
      fetch(`${server.base}${new URL(link).pathname}`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ password: "Ana's new long phrase" }),
      });
    assert.equal((await reset()).status, 204);
    assert.equal((await reset()).status, 404);
    assert.equal((await readAs("ana@example.com", "Ana's new long phrase")).status, 200);
    await assert.rejects(signIn(server.base, "ana@example.com", ana), (error: SignInError) => error.status === 400);
  });

  test("remove stops the member's token at its next request; the only owner stays", async () => {
    assert.equal((await npmRun('npm run clients -- create --account "Removals"')).status, 0);
    const created = await npmRun(
      'npm run people -- create --account "Removals" --email dana@example.com --role contributor --password "Dana\'s long phrase" --json',
    );
    assert.equal(created.status, 0, created.stderr);
    assert.equal(JSON.parse(created.stdout).password, "Dana's long phrase");
    const { status, token } = await readAs("dana@example.com", "Dana's long phrase");
    assert.equal(status, 200);
    const again = await npmRun(
      'npm run people -- create --account "Removals" --email DANA@example.com --role contributor',
    );
    assert.equal(again.status, 0, again.stderr);
    assert.match(again.stdout, /^dana@example\.com is contributor of account "Removals" already; nothing changed\.$/m);

    const removed = await npmRun('npm run people -- remove --account "Removals" --email dana@example.com');
    assert.equal(removed.status, 0, removed.stderr);
    assert.match(removed.stdout, /^Removed dana@example\.com \(contributor\) from account "Removals"/);
    const response = await fetch(`${server.base}/v3.0/pinpoints`, { headers: { Authorization: `Bearer ${token}` } });
    assert.equal(response.status, 401, await response.text());

    assert.equal(
      (await npmRun('npm run people -- create --account "Removals" --email eve@example.com --role owner')).status,
      0,
    );
    const last = await npmRun('npm run people -- remove --account "Removals" --email eve@example.com --json');
    assert.equal(last.status, 1);
    assert.deepEqual(JSON.parse(last.stdout), {
      error:
        'eve@example.com is the only owner of account "Removals", which must keep one: make someone else owner first.',
      exit_code: 1,
    });
  });

  test("wrong input is refused with exit status 2 and what is wrong; an unknown account with 1", async () => {
    const usage: [string, RegExp][] = [
      [
        'create --account "Acme Maps" --email fay@example.com --role boss',
        /^error: --role must be one of owner, admin, editor, contributor, viewer, not "boss"\.$/m,
      ],
      [
        'create --account "Acme Maps" --email fay@example.com --role viewer --password "too short"',
        /^error: --password must be at least 12 characters\.$/m,
      ],
      [
        'create --account "Acme Maps" --email fay --role viewer',
        /^error: --email must be an email address, such as ana@example\.com: "fay"\.$/m,
      ],
      ['create --account "Acme Maps" --role viewer', /^error: The create command needs --email\.$/m],
      ["list --email fay@example.com", /^error: The list command does not take --email\.$/m],
      [
        "reset --email fay@example.com --remote",
        /^error: With --remote, name the deployed service: --base URL or POI_BASE_URL\.$/m,
      ],
      ["rename --email fay@example.com", /^error: Unknown command "rename"; use create, list, remove or reset\.$/m],
      ["list --bogus", /Unknown option '--bogus'/],
    ];
    for (const [args, message] of usage) {
      const run = await npmRun(`npm run people -- ${args}`);
      assert.equal(run.status, 2, `${args}\n${run.stderr}`);
      assert.match(run.stderr, message);
      assert.match(run.stderr, /^Run `npm run people -- --help` for usage\.$/m);
      assert.equal(run.stdout, "");
    }
    const json = await npmRun(
      'npm run people -- create --account "Acme Maps" --email fay@example.com --role boss --json',
    );
    assert.equal(json.status, 2);
    assert.deepEqual(JSON.parse(json.stdout), {
      error: '--role must be one of owner, admin, editor, contributor, viewer, not "boss".',
      exit_code: 2,
    });

    const unknown = await npmRun(
      'npm run people -- create --account "Nobody\'s account" --email fay@example.com --role viewer',
    );
    assert.equal(unknown.status, 1, unknown.stderr);
    assert.match(
      unknown.stderr,
      /^error: There is no account named "Nobody's account"; create it with a client first/m,
    );
    const listed = await npmRun("npm run people -- list --json");
    assert.ok(!listed.stdout.includes("fay@example.com"), "a refused create wrote a person");
  });
});
