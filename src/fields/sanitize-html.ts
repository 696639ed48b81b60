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
  // Raw-text elements: what they hold is text to the parser but would read as markup once unwrapped.
  "xmp",
  "noembed",
  "noframes",
  "plaintext",
];

/**
 * Elements kept, with the attributes each may carry beyond the global ones.
 * A Map, so a tag named like an Object property (`<constructor>`) finds nothing.
 */
const ALLOWED = new Map<string, readonly string[]>([
  ["a", ["href", "hreflang"]],
  ["img", ["src", "alt", "width", "height"]],
  ["td", ["colspan", "rowspan"]],
  ["th", ["colspan", "rowspan", "scope"]],
  ["ol", ["start", "reversed"]],
  ...(
    "abbr b bdi bdo blockquote br caption cite code col colgroup dd del details dfn div dl dt em " +
    "figcaption figure h1 h2 h3 h4 h5 h6 hr i ins kbd li mark p pre q rp rt ruby s samp small " +
    "span strong sub summary sup table tbody tfoot thead time tr u ul var wbr"
  )
    .split(" ")
    .map((tag) => [tag, []] as const),
]);
/** Allowed elements that never have an end tag. */
const VOID = new Set(["br", "col", "hr", "img", "wbr"]);
const GLOBAL_ATTRIBUTES = ["title", "lang", "dir", "cite", "datetime"];

/** The elements and attributes a description keeps, for a browser that checks it again (src/maps/page.ts). */
export const DESCRIPTION_MARKUP = {
  elements: Object.fromEntries(ALLOWED),
  globalAttributes: GLOBAL_ATTRIBUTES,
} as const;
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

/** A "<" the parser reads as text: not followed by what starts a tag, an end tag, a comment or a doctype. */
const TEXT_LESS_THAN = /<(?![A-Za-z/!?])/;

/**
 * An end tag with something after its name (`</p onclick=alert(1)>`). Browsers ignore the rest, but a
 * consumer that tokenizes differently may read an attribute; the rewriter passes end tags through as
 * written, and one without an open element (stray) reaches no handler, so they are cut before parsing.
 */
const END_TAG_EXTRA_START = /<\/([A-Za-z][^\t\n\f\r />]*)[\t\n\f\r /]/g;

/**
 * `html` with each end tag's extra cut (`</p onclick=x>` becomes `</p>`): what replacing
 * `/<\/([A-Za-z][^\t\n\f\r />]*)[\t\n\f\r /][^>]*>/g` with `</$1>` does, in linear time. That search
 * rescans to the end from every such tag start when no `>` follows (scripts/check-regexes.ts); here
 * the first start without a `>` after it ends the search, since no later one can have one either.
 */
export function cutEndTagExtras(html: string): string {
  const start = new RegExp(END_TAG_EXTRA_START);
  let text = "";
  let from = 0;
  for (let match = start.exec(html); match; match = start.exec(html)) {
    const close = html.indexOf(">", start.lastIndex);
    if (close < 0) break;
    text += `${html.slice(from, match.index)}</${match[1]}>`;
    from = start.lastIndex = close + 1;
  }
  return text + html.slice(from);
}

/** Escapes an attribute's (raw, still entity-encoded) value for a double-quoted attribute. */
const quoted = (value: string) => `"${value.replaceAll('"', "&quot;")}"`;

/** One pass of the rewriter over `html`. */
async function rewrite(html: string): Promise<string> {
  const document: HTMLRewriterDocumentContentHandlers = {
    comments(comment) {
      comment.remove();
    },
  };
  // Removing a tag or a comment joins the text on either side: "<" + <b></b> + "script>" would read as
  // "<script>". So text "<" is escaped; a handler call per text chunk is costly, so only when there is one.
  if (TEXT_LESS_THAN.test(html)) {
    document.text = (chunk) => {
      const { text } = chunk;
      if (text.includes("<")) chunk.replace(text.replaceAll("<", "&lt;"), { html: true });
    };
  }
  const response = new HTMLRewriter()
    .on(DROPPED.join(","), {
      element(element) {
        element.remove();
      },
    })
    .on("*", {
      element(element) {
        const allowed = ALLOWED.get(element.tagName);
        if (!allowed) {
          element.removeAndKeepContent();
          return;
        }
        // Judge each attribute by its own value: with a duplicate name, getAttribute() sees only the first.
        const named = (name: string) => allowed.includes(name) || GLOBAL_ATTRIBUTES.includes(name);
        for (const [name, value] of [...element.attributes] as [string, string][]) {
          if (!named(name) || (URL_ATTRIBUTES.has(name) && !isSafeUrl(value))) element.removeAttribute(name);
        }
        // removeAttribute() cannot remove a name that starts with "=" (`<p =onclick=alert(1)>`): then the
        // start tag is written anew from the attributes kept, and the end tag, if any, likewise.
        const left = [...element.attributes] as [string, string][];
        if (left.every(([name]) => named(name))) return;
        const kept = left.filter(([name]) => named(name)).map(([name, value]) => ` ${name}=${quoted(value)}`);
        const tag = element.tagName;
        element.before(`<${tag}${kept.join("")}>`, { html: true });
        element.removeAndKeepContent();
        if (!VOID.has(tag))
          element.onEndTag((end) => {
            end.before(`</${tag}>`, { html: true });
          });
      },
    })
    .onDocument(document)
    .transform(
      new Response(cutEndTagExtras(html), {
        headers: { "Content-Type": "text/html; charset=utf-8" },
      }),
    );
  return response.text();
}

/**
 * Closes whatever construct the input may end inside: a tag or attribute
 * value (`"'>`), a comment or bogus comment (`<!---->` after the `>`).
 */
const CLOSE = `"'><!---->`;

/**
 * Markup the rewriter would leave exactly as written: text without "<" (or NUL), and allowed
 * elements' start and end tags with no attributes. No handler changes any of it (no comment, no
 * text "<", nothing dropped, unwrapped or stripped), and nothing is left unfinished at the end.
 */
const UNCHANGED = new RegExp(`^(?:[^<\\u0000]|</?(?:${[...ALLOWED.keys()].join("|")})>)*$`);

/**
 * Returns `html` with active content removed and ordinary markup kept. Markup that is already
 * clean is returned as it is, at once, without going through the rewriter, which costs ~0.2 ms
 * per call: a bulk import of 1,000 described places paid most of its time for it
 * (docs/benchmarks.md).
 */
export function sanitizeHtml(html: string): string | Promise<string> {
  // Lone surrogates would become U+FFFD on the way through the rewriter's UTF-8.
  if (UNCHANGED.test(html) && html.isWellFormed()) return html.trim();
  return sanitizeWithRewriter(html);
}

/**
 * Returns `html` with active content removed and ordinary markup kept, through the rewriter.
 *
 * The parser passes an unfinished construct at the very end of its input
 * (`<img src=x onerror=alert(1)//` with no `>`) through verbatim, and a page
 * embedding the description would complete it with its own next `>`. So an
 * element with a random name is appended: parsed as an element, it is removed
 * like any unknown one; if it shows in the output, it was swallowed by such a
 * construct, which is then closed before it.
 */
export async function sanitizeWithRewriter(html: string): Promise<string> {
  const marker = `end-${crypto.randomUUID()}`;
  try {
    for (const closing of ["", CLOSE]) {
      const output = await rewrite(`${html}${closing}<${marker}>`);
      if (!output.includes(marker)) return output.trim();
    }
  } catch {
    // The streaming parser refuses some non-conforming markup it cannot read unambiguously
    // (`<select><style>`, `<frameset><style>`): what it cannot parse is kept as text, below.
  }
  // Nothing closed it (not seen in practice), or the parser gave up: keep the description as plain text.
  return escapeText(html).trim();
}
