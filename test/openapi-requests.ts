/**
 * Requests built from the OpenAPI document, for the tests that send one to every operation of a kind:
 * its operations, its `$ref`s resolved, and the URL and example bodies of an operation with the ids they
 * name created first, each from its collection's own documented example, by the caller given.
 */
import { expect } from "vitest";
import type { Caller } from "./helpers";

export type Json = Record<string, any>;

export function openApiRequests(document: Json, who: Caller) {
  /** Every operation: `[method, path, operation]`, the method in lower case as the document has it. */
  const operations = (): [string, string, Json][] =>
    Object.entries(document.paths as Record<string, Record<string, Json>>).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]): [string, string, Json] => [method, path, operation]),
    );

  const resolved = (value: Json): Json =>
    value.$ref
      ? value.$ref
          .slice(2)
          .split("/")
          .reduce((node: Json, key: string) => node[key], document)
      : value;

  /**
   * The example of a body, with the ids it names replaced by ones the caller owns; for a list's order, two
   * new members of the list the operation's `url` names, the example moving the second before the first.
   */
  async function withOwnIds(path: string, example: unknown, url = ""): Promise<unknown> {
    if (path === "/v3.0/events" && example && typeof example === "object" && "pinpoint" in example)
      return { ...example, pinpoint: await create("/v3.0/pinpoints") };
    if (/^\/v3\.0\/lists\/\{id\}\/pinpoints$/.test(path) && Array.isArray(example))
      return Promise.all(example.map(async () => ({ id: await create("/v3.0/pinpoints") })));
    if (path === "/v3.0/lists/{id}/pinpoints/order") {
      const members = [await create("/v3.0/pinpoints"), await create("/v3.0/pinpoints")];
      const added = await who.send(
        "POST",
        url.replace(/\/order$/, ""),
        members.map((id) => ({ id })),
      );
      expect(added.status, "the members of the list to order").toBe(200);
      return { ...(example as Json), move: members[1], before: members[0] };
    }
    return example;
  }

  /** Creates an item of a collection from the collection's documented JSON example; returns its id. */
  async function create(collection: string): Promise<number> {
    const example = document.paths[collection].post.requestBody.content["application/json"].example;
    const response = await who.send("POST", collection, await withOwnIds(collection, example));
    expect(response.status, `POST ${collection} with its example`).toBe(201);
    return (await response.json<{ id: number }>()).id;
  }

  /**
   * The URL of an operation: path parameters from `values`, else their examples, else created; query
   * parameters' examples.
   */
  async function urlOf(path: string, operation: Json, values: Record<string, string> = {}): Promise<string> {
    const parameters = ((operation.parameters ?? []) as Json[]).map(resolved);
    let url = path;
    for (const parameter of parameters.filter((p) => p.in === "path")) {
      const example = values[parameter.name] ?? parameter.example ?? parameter.schema?.example;
      const value =
        example ??
        (parameter.name === "featureId"
          ? await create("/v3.0/pinpoints")
          : await create(path.slice(0, path.indexOf(`/{${parameter.name}}`))));
      url = url.replace(`{${parameter.name}}`, encodeURI(String(value)));
    }
    const query = new URLSearchParams();
    for (const parameter of parameters.filter((p) => p.in === "query")) {
      const example = parameter.example ?? parameter.schema?.example;
      if (example !== undefined)
        query.set(parameter.name, Array.isArray(example) ? example.join(",") : String(example));
    }
    return query.size > 0 ? `${url}?${query}` : url;
  }

  return { operations, resolved, withOwnIds, create, urlOf };
}
