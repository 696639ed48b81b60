/** Follows `next` links (limit=1000) until `skip` rows are behind, then returns that position's limit=20 URL. */
export async function pageAt(start: URL, skip: number, headers: Record<string, string>): Promise<URL> {
  let url = new URL(start);
  url.searchParams.set("limit", "1000");
  for (let seen = 0; seen < skip;) {
    const response = await fetch(url, { headers });
    if (response.status !== 200) throw new Error(`GET ${url.pathname}: ${response.status} ${await response.text()}`);
    const page = (await response.json()) as { results: unknown[]; next: string | null };
    seen += page.results.length;
    if (!page.next) throw new Error(`${url.pathname}${url.search} ran out after ${seen} rows`);
    // `next` is absolute on the Worker's own origin; keep talking to the socket we measure.
    const next = new URL(page.next);
    url = new URL(next.pathname + next.search, start);
  }
  url.searchParams.set("limit", "20");
  return url;
}
