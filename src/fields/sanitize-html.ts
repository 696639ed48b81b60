/**
 * HTML descriptions are stored sanitized (CONTRACT "Resources"): ordinary
 * markup is kept; scripts, styles, embedded documents, forms, event-handler
 * attributes, inline styles and `javascript:`-like URLs are removed. Uses the
 * runtime's own streaming HTML parser (HTMLRewriter), so the result is what
 * a browser would parse, and no dependency is needed.
 */

/** Elements removed together with everything inside them. */
const DROPPED = [
  "script",
  "style",
  "iframe",
  "frame",
  "frameset",
  "object",
  "embed",
  "applet",
  "noscript",
  "template",
  "svg",
  "math",
  "form",
  "input",
  "button",
  "textarea",
  "select",
  "option",
  "link",
  "meta",
  "base",
  "title",
  "head",
  "audio",
  "video",
  "source",
  "track",
  "canvas",
  "portal",
  "dialog",
  "slot",
];

/** Elements kept, with the attributes each may carry beyond the global ones. */
const ALLOWED: Record<string, readonly string[]> = {
  a: ["href", "hreflang"],
  img: ["src", "alt", "width", "height"],
  td: ["colspan", "rowspan"],
  th: ["colspan", "rowspan", "scope"],
  ol: ["start", "reversed"],
  ...Object.fromEntries(
    (
      "abbr b bdi bdo blockquote br caption cite code col colgroup dd del details dfn div dl dt em " +
      "figcaption figure h1 h2 h3 h4 h5 h6 hr i ins kbd li mark p pre q rp rt ruby s samp small " +
      "span strong sub summary sup table tbody tfoot thead time tr u ul var wbr"
    )
      .split(" ")
      .map((tag) => [tag, [] as const]),
  ),
};
const GLOBAL_ATTRIBUTES = ["title", "lang", "dir", "cite", "datetime"];
const URL_ATTRIBUTES = new Set(["href", "src", "cite"]);
const SAFE_SCHEMES = new Set(["http", "https", "mailto", "tel"]);

/** Decodes character references so `jav&#x61;script:` is seen for what it is. */
function decodeEntities(value: string): string {
  return value
    .replace(/&#x([0-9a-f]+);?/gi, (_, hex) => String.fromCodePoint(Math.min(parseInt(String(hex), 16), 0x10ffff)))
    .replace(/&#(\d+);?/g, (_, dec) => String.fromCodePoint(Math.min(Number(dec), 0x10ffff)))
    .replace(
      /&(colon|tab|newline);?/gi,
      (_, name) => ({ colon: ":", tab: "\t", newline: "\n" })[String(name).toLowerCase()] ?? "",
    );
}

/** True for relative URLs and the few schemes a description may link to. */
export function isSafeUrl(raw: string): boolean {
  // Browsers ignore control characters and whitespace inside a scheme.
  const value = decodeEntities(raw).replace(/[\u0000-\u0020\u007f-\u009f]/g, "");
  const scheme = value.match(/^([^/?#]*?):/)?.[1];
  return scheme === undefined || SAFE_SCHEMES.has(scheme.toLowerCase());
}

const rewriter = () =>
  new HTMLRewriter()
    .on(DROPPED.join(","), {
      element(element) {
        element.remove();
      },
    })
    .on("*", {
      element(element) {
        const allowed = ALLOWED[element.tagName];
        if (!allowed) {
          element.removeAndKeepContent();
          return;
        }
        for (const [name] of [...element.attributes] as [string, string][]) {
          const keep =
            (allowed.includes(name) || GLOBAL_ATTRIBUTES.includes(name)) &&
            (!URL_ATTRIBUTES.has(name) || isSafeUrl(element.getAttribute(name) ?? ""));
          if (!keep) element.removeAttribute(name);
        }
      },
      comments(comment) {
        comment.remove();
      },
    })
    .onDocument({
      doctype() {},
      comments(comment) {
        comment.remove();
      },
    });

/** Returns `html` with active content removed and ordinary markup kept. */
export async function sanitizeHtml(html: string): Promise<string> {
  const response = rewriter().transform(
    new Response(html, { headers: { "Content-Type": "text/html; charset=utf-8" } }),
  );
  return (await response.text()).trim();
}
