/**
 * Fails when a regular expression in src/ can take super-linear time
 * (ReDoS): every regex literal, and every `new RegExp(...)` whose pattern is
 * built from the module's own top-level constants, is analysed by recheck
 * (its pure-JavaScript backend, so the result is the same on every machine
 * and nothing but Node runs). A pattern that cannot be known before run time
 * (one built from a request, or from an import) is refused too: it could not
 * be checked. `npm run check` runs this.
 *
 * Most patterns in src/ see request input (headers, query parameters, body
 * fields); the rest are held to the same rule, so nobody has to decide which
 * is which. A regex applied with `g` or without `^` is analysed as the
 * search it is: the engine retries it at every position, which is how a
 * global unanchored entity-tag pattern once cost seconds per header.
 *
 *   node scripts/check-regexes.ts [--verbose]   each pattern with its verdict
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { runInNewContext } from "node:vm";
import { check, type Diagnostics } from "recheck";
import ts from "typescript";

// The other backends are a native binary or a JAR picked by platform: same analysis, but pure is the
// one that is the same everywhere.
process.env.RECHECK_BACKEND = "pure";

type Found = { where: string; source: string; flags: string } | { where: string; problem: string };

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return filesUnder(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

/** The module's top-level `const` declarations by name, with the statement each belongs to. */
function topLevelConstants(file: ts.SourceFile): Map<string, ts.VariableStatement> {
  const constants = new Map<string, ts.VariableStatement>();
  for (const statement of file.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    if (!(statement.declarationList.flags & ts.NodeFlags.Const)) continue;
    for (const declaration of statement.declarationList.declarations) {
      if (ts.isIdentifier(declaration.name)) constants.set(declaration.name.text, statement);
    }
  }
  return constants;
}

/** The top-level constant statements `node` depends on, transitively, in source order. */
function dependencies(node: ts.Node, constants: Map<string, ts.VariableStatement>): ts.VariableStatement[] {
  const needed = new Set<ts.VariableStatement>();
  const visit = (n: ts.Node) => {
    if (ts.isIdentifier(n)) {
      const statement = constants.get(n.text);
      if (statement && !needed.has(statement)) {
        needed.add(statement);
        statement.declarationList.declarations.forEach((d) => d.initializer && visit(d.initializer));
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(node);
  return [...needed].sort((a, b) => a.pos - b.pos);
}

const toJs = (code: string) =>
  ts.transpileModule(code, { compilerOptions: { target: ts.ScriptTarget.ES2024, module: ts.ModuleKind.None } })
    .outputText;

/** The pattern and flags of `new RegExp(pattern, flags)`, computed from the module's constants. */
function evaluate(call: ts.NewExpression | ts.CallExpression, file: ts.SourceFile): { source: string; flags: string } {
  const [pattern, flags] = call.arguments ?? [];
  if (!pattern) throw new Error("no pattern");
  const constants = topLevelConstants(file);
  const prelude = dependencies(call, constants).map((s) => s.getText(file));
  // `new RegExp(regex)` copies a regex (its flags too, unless given).
  const flagsText = flags ? `(${flags.getText(file)})` : `(__pattern instanceof RegExp ? __pattern.flags : "")`;
  const code =
    `${prelude.join("\n")}\n;const __pattern = (${pattern.getText(file)});\n` +
    `[__pattern instanceof RegExp ? __pattern.source : __pattern, ${flagsText}]`;
  // Only constants and built-ins are in scope: anything else (an import, a parameter) is a ReferenceError.
  const [source, flagText] = runInNewContext(toJs(code), { exports: {} }, { timeout: 1000 }) as unknown[];
  if (typeof source !== "string" || typeof flagText !== "string") throw new Error("pattern is not a string");
  return { source, flags: flagText };
}

function regexesOf(path: string): Found[] {
  const file = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true);
  const found: Found[] = [];
  const where = (node: ts.Node) =>
    `${relative(".", path)}:${file.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
  const visit = (node: ts.Node) => {
    if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
      const text = node.getText(file);
      const end = text.lastIndexOf("/");
      found.push({ where: where(node), source: text.slice(1, end), flags: text.slice(end + 1) });
    } else if (
      (ts.isNewExpression(node) || ts.isCallExpression(node)) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === "RegExp"
    ) {
      try {
        found.push({ where: where(node), ...evaluate(node, file) });
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        found.push({ where: where(node), problem: `its pattern is not known before run time (${reason})` });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

const verbose = process.argv.includes("--verbose");
const found = filesUnder("src").flatMap(regexesOf);
const failures: string[] = [];
for (const regex of found) {
  if ("problem" in regex) {
    failures.push(`${regex.where}: ${regex.problem}`);
    continue;
  }
  // The largest pattern (src/fields/sanitize-html.ts) takes seconds alone and over 30 s on a loaded
  // 2-core machine; the limit is for a checker that would never finish, not a speed goal.
  const result: Diagnostics = await check(regex.source, regex.flags, { randomSeed: 0, timeout: 180_000 });
  const shown = `/${regex.source.length > 80 ? `${regex.source.slice(0, 77)}...` : regex.source}/${regex.flags}`;
  if (result.status === "safe") {
    if (verbose) console.log(`ok ${regex.where} ${shown} (${result.complexity.type}, ${result.checker})`);
  } else if (result.status === "vulnerable") {
    failures.push(
      `${regex.where}: ${shown} is ${result.complexity.summary} (attack: ${result.attack.pattern}); ` +
        `the part to rewrite: ${result.hotspot.map((h) => regex.source.slice(h.start, h.end)).join(", ")}`,
    );
  } else {
    failures.push(`${regex.where}: ${shown} could not be analysed (${result.error.kind})`);
  }
}
if (failures.length > 0) {
  console.error(`Regular expressions that can take super-linear time (ReDoS), or cannot be checked:`);
  for (const failure of failures) console.error(`  ${failure}`);
  console.error("Rewrite each as a pattern whose quantified parts cannot match the same text in two ways.");
  process.exit(1);
}
console.log(`${found.length} regular expressions in src/ take linear time (recheck)`);
