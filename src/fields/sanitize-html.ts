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

/** Escapes text so it can only ever be text. */
const escapeText = (text: string) => text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");

type Rewritten = { output: string; endsAsText: (marker: string) => boolean };

/** One pass of the rewriter over `html`; also tells whether the input ended as plain text. */
async function rewrite(html: string, markerLength: number): Promise<Rewritten> {
  let textTail = "";
  const response = new HTMLRewriter()
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
        // Judge each attribute by its own value: with a duplicate name, getAttribute() sees only the first.
        for (const [name, value] of [...element.attributes] as [string, string][]) {
          const keep =
            (allowed.includes(name) || GLOBAL_ATTRIBUTES.includes(name)) &&
            (!URL_ATTRIBUTES.has(name) || isSafeUrl(value));
          if (!keep) element.removeAttribute(name);
        }
      },
    })
    .onDocument({
      comments(comment) {
        comment.remove();
      },
      text(chunk) {
        textTail = (textTail + chunk.text).slice(-markerLength);
        // A "<" the parser saw as text (in <xmp>, <plaintext>, or just "a < b") must not become markup once
        // the element around it is unwrapped.
        if (chunk.text.includes("<")) chunk.replace(chunk.text.replaceAll("<", "&lt;"), { html: true });
      },
    })
    .transform(new Response(html, { headers: { "Content-Type": "text/html; charset=utf-8" } }));
  const output = await response.text();
  return { output, endsAsText: (marker) => textTail === marker };
}

/**
 * Closes whatever construct the input may end inside: a tag or attribute
 * value (`"'>`), a comment or bogus comment (`<!---->` after the `>`).
 */
const CLOSE = `"'><!---->`;

/**
 * Returns `html` with active content removed and ordinary markup kept.
 *
 * The parser passes an unfinished construct at the very end of its input
 * (`<img src=x onerror=alert(1)//` with no `>`) through verbatim, and a page
 * embedding the description would complete it with its own next `>`. So a
 * random marker is appended: if it comes out as text, the input ended as text
 * and the marker is cut off again; if not, the construct is closed first.
 */
export async function sanitizeHtml(html: string): Promise<string> {
  // A leading digit keeps a final bare "<" text ("<0" starts no tag).
  const marker = `0${crypto.randomUUID().replaceAll("-", "")}`;
  for (const closing of ["", CLOSE]) {
    const { output, endsAsText } = await rewrite(html + closing + marker, marker.length);
    if (endsAsText(marker)) {
      // The marker is either the final text, or inside an element dropped with its content (<script>...).
      if (output.endsWith(marker)) return output.slice(0, -marker.length).trim();
      if (!output.includes(marker)) return output.trim();
    }
  }
  // Nothing closed it (not seen in practice): keep the description as plain text.
  return escapeText(html).trim();
}
