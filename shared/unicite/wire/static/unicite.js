// unicite.js: render cited chat messages of the unicite wire protocol in a browser.
//
// A plain ES module, no build step, no dependency. One message is rendered from the history
// document (`unicite.wire.history(answer)`, which is also the data of the protocol's
// `thread.message.completed` event) by `renderMessage`, the one function used both when a live
// stream completes and when a page reloads, so the two give the same DOM. While the answer
// streams, `MessageView` shows the text as Markdown with provisional `[n]` markers and never a
// half-typed one.
//
// Safety: every string from the wire is put in the page with `textContent` or `setAttribute`;
// nothing is parsed as HTML. Only http(s) URLs become links (the `href` field of a source, a
// Markdown link or autolink); control characters and bidi overrides are stripped from what is
// shown.
//
//   import { ThreadView, subscribe } from "/unicite/unicite.js";
//   const thread = new ThreadView(document.querySelector("#thread"));
//   const view = thread.addTurn({ question, messageId });
//   subscribe(view, `/api/messages/${messageId}/stream`);   // live: deltas, then the answer
//   thread.addTurn({ question, messageId }).complete(doc);   // reload: the history document

export const EVENTS = Object.freeze({
  delta: "thread.message.delta",
  reset: "thread.message.reset",
  completed: "thread.message.completed",
  cancelled: "thread.message.cancelled",
  error: "thread.message.error",
});

export const DEFAULT_LABELS = Object.freeze({
  sources: "Sources",
  verified: "verified",
  brokeOff: "The answer broke off",
  stopped: "Stopped",
  stop: "Stop",
  source: "Source",
});

const REL = "noopener noreferrer";
const QUOTE_LIMIT = 200;
// C0 controls but tab and newline, DEL, C1 controls, bidi embeddings, overrides and isolates.
const UNSAFE_TEXT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
const UNSAFE_LINE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
const UNSAFE_CHAR = /[\u0000-\u0020\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

// --- small helpers -----------------------------------------------------------------------------

/** Text as shown: unsafe control and bidi characters removed. */
export function cleanText(value, { multiline = true } = {}) {
  if (typeof value !== "string") return "";
  return value.replace(multiline ? UNSAFE_TEXT : UNSAFE_LINE, "");
}

function oneLine(value) {
  return cleanText(value, { multiline: false }).replace(/\s+/g, " ").trim();
}

function cut(value, limit) {
  const chars = Array.from(value);
  return chars.length > limit ? `${chars.slice(0, limit - 1).join("").trimEnd()}…` : value;
}

/** The URL when it is an absolute http(s) URL that may be linked, else null. */
export function safeHref(value) {
  if (typeof value !== "string") return null;
  const raw = value.trim();
  if (!/^https?:\/\//i.test(raw) || UNSAFE_CHAR.test(raw) || /\s/.test(raw)) return null;
  try {
    const url = new URL(raw);
    if (url.protocol !== "http:" && url.protocol !== "https:") return null;
    if (url.username || url.password || !url.hostname) return null;
    return raw;
  } catch {
    return null;
  }
}

function el(doc, tag, className, text) {
  const node = doc.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null && text !== "") node.textContent = text;
  return node;
}

function externalLink(doc, href, className) {
  const a = el(doc, "a", className);
  a.setAttribute("href", href);
  a.setAttribute("target", "_blank");
  a.setAttribute("rel", REL);
  return a;
}

function hash(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(36);
}

let anonymous = 0;

/** The element id prefix of a message: derived from its id, so ids never collide. */
export function messagePrefix(messageId) {
  if (typeof messageId !== "string" || messageId === "") {
    anonymous += 1;
    return `unicite-m${anonymous}`;
  }
  const safe = messageId.replace(/[^A-Za-z0-9_-]/g, "_");
  return safe === messageId ? `unicite-${safe}` : `unicite-${safe}-${hash(messageId)}`;
}

// --- Markdown ----------------------------------------------------------------------------------
//
// A small, safe Markdown subset: paragraphs (single line breaks kept), ATX headings, fenced
// code, block quotes, - / * / + and 1. lists (nested by indentation), thematic breaks, and
// inline **bold**, *italic*, `code`, [links](https://…), <https://…> and bare http(s) URLs.
// Each character keeps its offset in the source text, so citation markers are placed at the
// exact UTF-16 spans the metadata gives, wherever the Markdown put them.

const FENCE = /^( {0,3})(`{3,}|~{3,})(.*)$/;
const HEADING = /^ {0,3}(#{1,6})(?=[ \t]|$)[ \t]*/;
const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}> ?/;
const ITEM = /^( {0,3})([-*+]|\d{1,9}[.)])([ \t]+|$)/;
const PUNCTUATION = /[!-/:-@[-`{-~]/;

function splitLines(text, offset) {
  const lines = [];
  const re = /\r\n|\n|\r/g;
  let start = 0;
  let match;
  while ((match = re.exec(text)) !== null) {
    lines.push({ text: text.slice(start, match.index), off: offset + start });
    start = match.index + match[0].length;
  }
  lines.push({ text: text.slice(start), off: offset + start });
  return lines;
}

function isBlank(line) {
  return /^[ \t]*$/.test(line.text);
}

function strip(line, count) {
  return { text: line.text.slice(count), off: line.off + count };
}

function indentOf(text) {
  return /^ */.exec(text)[0].length;
}

function startsBlock(text) {
  return FENCE.test(text) || HEADING.test(text) || RULE.test(text) || QUOTE.test(text) || ITEM.test(text);
}

// Whether a line ends the paragraph above it: a list item interrupts a paragraph only when it
// has content and, numbered, starts at 1 (so "1989. That year" continues the sentence).
function interrupts(text) {
  const item = ITEM.exec(text);
  if (item && !(FENCE.test(text) || HEADING.test(text) || RULE.test(text) || QUOTE.test(text))) {
    if (/^[ \t]*$/.test(text.slice(item[0].length))) return false;
    return !/\d/.test(item[2]) || parseInt(item[2], 10) === 1;
  }
  return startsBlock(text);
}

class Renderer {
  constructor(doc, markers, makeMarker) {
    this.doc = doc;
    this.markers = markers; // Map: start offset -> { start, end, ... }
    this.makeMarker = makeMarker; // (marker) -> Node[]
  }

  render(text) {
    const fragment = this.doc.createDocumentFragment();
    for (const node of this.blocks(splitLines(text, 0), false)) fragment.append(node);
    return fragment;
  }

  blocks(lines, tight) {
    const out = [];
    let i = 0;
    while (i < lines.length) {
      const line = lines[i];
      if (isBlank(line)) {
        i += 1;
        continue;
      }
      const fence = FENCE.exec(line.text);
      if (fence) {
        i = this.fenced(lines, i, fence, out);
        continue;
      }
      const heading = HEADING.exec(line.text);
      if (heading) {
        const level = heading[1].length;
        let content = strip(line, heading[0].length);
        const closing = /(?:[ \t]+#+)?[ \t]*$/.exec(content.text);
        content = { text: content.text.slice(0, closing.index), off: content.off };
        const h = el(this.doc, `h${level}`);
        this.inline([content], h);
        out.push(h);
        i += 1;
        continue;
      }
      if (RULE.test(line.text)) {
        out.push(el(this.doc, "hr"));
        i += 1;
        continue;
      }
      if (QUOTE.test(line.text)) {
        const inner = [];
        while (i < lines.length && QUOTE.test(lines[i].text)) {
          inner.push(strip(lines[i], QUOTE.exec(lines[i].text)[0].length));
          i += 1;
        }
        const quote = el(this.doc, "blockquote");
        for (const node of this.blocks(inner, false)) quote.append(node);
        out.push(quote);
        continue;
      }
      if (ITEM.test(line.text)) {
        i = this.list(lines, i, out);
        continue;
      }
      const paragraph = [line];
      i += 1;
      while (i < lines.length && !isBlank(lines[i]) && !interrupts(lines[i].text)) {
        paragraph.push(lines[i]);
        i += 1;
      }
      if (tight) {
        const holder = this.doc.createDocumentFragment();
        this.inline(paragraph, holder);
        out.push(holder);
      } else {
        const p = el(this.doc, "p");
        this.inline(paragraph, p);
        out.push(p);
      }
    }
    return out;
  }

  fenced(lines, i, fence, out) {
    const indent = fence[1].length;
    const marker = fence[2];
    const info = fence[3].trim().split(/\s+/)[0] || "";
    if (marker[0] === "`" && fence[3].includes("`")) {
      // Not a fence (a code span on its own line): a paragraph line.
      const p = el(this.doc, "p");
      this.inline([lines[i]], p);
      out.push(p);
      return i + 1;
    }
    const body = [];
    let j = i + 1;
    const close = new RegExp(`^ {0,3}${marker[0] === "`" ? "`" : "~"}{${marker.length},}[ \\t]*$`);
    while (j < lines.length && !close.test(lines[j].text)) {
      const text = lines[j].text;
      body.push(text.slice(Math.min(indent, indentOf(text))));
      j += 1;
    }
    const pre = el(this.doc, "pre");
    const code = el(this.doc, "code", null, cleanText(body.join("\n")));
    const language = info.replace(/[^A-Za-z0-9_+-]/g, "");
    if (language) code.className = `language-${language}`;
    pre.append(code);
    out.push(pre);
    return j < lines.length ? j + 1 : j;
  }

  list(lines, i, out) {
    const first = ITEM.exec(lines[i].text);
    const ordered = /\d/.test(first[2]);
    const kind = ordered ? first[2].slice(-1) : first[2];
    const listEl = el(this.doc, ordered ? "ol" : "ul");
    if (ordered) {
      const start = parseInt(first[2], 10);
      if (start !== 1) listEl.setAttribute("start", String(start));
    }
    const items = [];
    let loose = false;
    while (i < lines.length) {
      const match = ITEM.exec(lines[i].text);
      if (!match) break;
      const itemKind = /\d/.test(match[2]) ? match[2].slice(-1) : match[2];
      if (itemKind !== kind || /\d/.test(match[2]) !== ordered) break;
      const spaces = match[3].length;
      const width = match[1].length + match[2].length + (spaces === 0 ? 1 : spaces > 4 ? 1 : spaces);
      const body = [strip(lines[i], Math.min(width, lines[i].text.length))];
      i += 1;
      let blank = false;
      while (i < lines.length) {
        const line = lines[i];
        if (isBlank(line)) {
          blank = true;
          body.push({ text: "", off: line.off });
          i += 1;
          continue;
        }
        const indent = indentOf(line.text);
        if (indent >= width) {
          if (blank) loose = true;
          blank = false;
          body.push(strip(line, width));
          i += 1;
          continue;
        }
        if (ITEM.test(line.text)) {
          if (indent < 2 || indent <= match[1].length) break; // the next item, or another list
          if (blank) loose = true;
          blank = false;
          body.push(strip(line, indent)); // a nested list indented less than the item's text
          i += 1;
          continue;
        }
        if (!blank && !interrupts(line.text)) {
          body.push(strip(line, indent)); // a lazy continuation of the item's paragraph
          i += 1;
          continue;
        }
        break;
      }
      while (body.length && isBlank(body[body.length - 1])) body.pop();
      items.push(body);
      if (blank) {
        const next = i < lines.length ? ITEM.exec(lines[i].text) : null;
        const nextKind = next ? (/\d/.test(next[2]) ? next[2].slice(-1) : next[2]) : null;
        if (!next || nextKind !== kind || /\d/.test(next[2]) !== ordered) break;
        loose = true;
      }
    }
    for (const body of items) {
      const li = el(this.doc, "li");
      for (const node of this.blocks(body, !loose)) li.append(node);
      listEl.append(li);
    }
    out.push(listEl);
    return i;
  }

  // Inline: `lines` (each {text, off}) joined with line breaks; each char keeps its offset.
  inline(lines, parent) {
    let s = "";
    const pos = [];
    lines.forEach((line, n) => {
      let text = line.text;
      text = text.replace(/[ \t]+$/, "");
      if (n > 0) {
        s += "\n";
        pos.push(-1);
        const lead = indentOf(text);
        text = text.slice(lead);
        for (let k = 0; k < text.length; k += 1) pos.push(line.off + lead + k);
      } else {
        for (let k = 0; k < text.length; k += 1) pos.push(line.off + k);
      }
      s += text;
    });
    this.s = s;
    this.pos = pos;
    this.spans(0, s.length, parent, true);
  }

  markerAt(k, end) {
    const offset = this.pos[k];
    if (offset === undefined || offset < 0) return null;
    const marker = this.markers.get(offset);
    if (!marker) return null;
    const length = marker.end - marker.start;
    if (k + length > end) return null;
    for (let t = 1; t < length; t += 1) if (this.pos[k + t] !== offset + t) return null;
    return marker;
  }

  codeSpanEnd(k, end) {
    const run = /^`+/.exec(this.s.slice(k, end))[0];
    let j = k + run.length;
    while (j < end) {
      const next = this.s.indexOf(run, j);
      if (next < 0 || next >= end) return -1;
      let after = next + run.length;
      if (this.s[after] === "`") {
        while (this.s[after] === "`") after += 1;
        j = after;
        continue;
      }
      return next;
    }
    return -1;
  }

  // The index of the closing `delim` for an opener at k (skipping code spans and markers).
  closing(delim, k, end) {
    let j = k + delim.length;
    if (j >= end || /\s/.test(this.s[j])) return -1;
    while (j < end) {
      const ch = this.s[j];
      if (ch === "\\") {
        j += 2;
        continue;
      }
      if (ch === "`") {
        const close = this.codeSpanEnd(j, end);
        if (close >= 0) {
          j = close + /^`+/.exec(this.s.slice(j))[0].length;
          continue;
        }
      }
      const marker = this.markerAt(j, end);
      if (marker) {
        j += marker.end - marker.start;
        continue;
      }
      if (this.s.startsWith(delim, j) && j > k + delim.length && !/\s/.test(this.s[j - 1])) {
        const single = delim.length === 1;
        const doubled = single && (this.s[j + 1] === delim || this.s[j - 1] === delim);
        const wordAfter = delim[0] === "_" && /[\p{L}\p{N}]/u.test(this.s[j + delim.length] || "");
        if (!doubled && !wordAfter) return j;
      }
      j += 1;
    }
    return -1;
  }

  linkEnd(k, end) {
    // [label](url): returns { labelEnd, urlStart, urlEnd, end } or null.
    let depth = 0;
    let j = k;
    for (; j < end; j += 1) {
      const ch = this.s[j];
      if (ch === "\\") {
        j += 1;
        continue;
      }
      if (ch === "[") depth += 1;
      else if (ch === "]") {
        depth -= 1;
        if (depth === 0) break;
      } else if (ch === "\n" && this.s[j + 1] === "\n") return null;
    }
    if (j >= end || this.s[j + 1] !== "(") return null;
    const labelEnd = j;
    let u = j + 2;
    while (u < end && this.s[u] === " ") u += 1;
    const urlStart = u;
    let parens = 0;
    while (u < end) {
      const ch = this.s[u];
      if (/\s/.test(ch)) break;
      if (ch === "(") parens += 1;
      if (ch === ")") {
        if (parens === 0) break;
        parens -= 1;
      }
      u += 1;
    }
    const urlEnd = u;
    while (u < end && this.s[u] !== ")") {
      if (this.s[u] === "\n") return null;
      u += 1;
    }
    if (u >= end) return null;
    return { labelEnd, urlStart, urlEnd, end: u + 1 };
  }

  spans(start, end, parent, markersAllowed) {
    const doc = this.doc;
    let buffer = "";
    const flush = () => {
      if (buffer) parent.append(doc.createTextNode(cleanText(buffer)));
      buffer = "";
    };
    let k = start;
    while (k < end) {
      const ch = this.s[k];
      const marker = this.markerAt(k, end);
      if (marker) {
        flush();
        if (markersAllowed) for (const node of this.makeMarker(marker)) parent.append(node);
        else parent.append(doc.createTextNode(cleanText(this.s.slice(k, k + marker.end - marker.start))));
        k += marker.end - marker.start;
        continue;
      }
      if (ch === "\n") {
        flush();
        parent.append(el(doc, "br"));
        k += 1;
        continue;
      }
      if (ch === "\\" && k + 1 < end && PUNCTUATION.test(this.s[k + 1])) {
        buffer += this.s[k + 1];
        k += 2;
        continue;
      }
      if (ch === "`") {
        const close = this.codeSpanEnd(k, end);
        const run = /^`+/.exec(this.s.slice(k, end))[0].length;
        if (close >= 0) {
          flush();
          let code = this.s.slice(k + run, close).replace(/\n/g, " ");
          if (/^ .* $/.test(code) && code.trim()) code = code.slice(1, -1);
          parent.append(el(doc, "code", null, cleanText(code)));
          k = close + run;
        } else {
          buffer += this.s.slice(k, k + run);
          k += run;
        }
        continue;
      }
      if (ch === "*" || ch === "_") {
        const double = this.s[k + 1] === ch;
        const delim = double ? ch + ch : ch;
        const intraword = ch === "_" && k > 0 && /[\p{L}\p{N}]/u.test(this.s[k - 1]);
        const close = intraword ? -1 : this.closing(delim, k, end);
        if (close >= 0) {
          flush();
          const node = el(doc, double ? "strong" : "em");
          this.spans(k + delim.length, close, node, markersAllowed);
          parent.append(node);
          k = close + delim.length;
        } else {
          buffer += delim;
          k += delim.length;
        }
        continue;
      }
      if (ch === "!" && this.s[k + 1] === "[") {
        const link = this.linkEnd(k + 1, end);
        if (link) {
          // Images are never loaded: their description is shown as text.
          flush();
          this.spans(k + 2, link.labelEnd, parent, markersAllowed);
          k = link.end;
          continue;
        }
      }
      if (ch === "[") {
        const link = this.linkEnd(k, end);
        if (link) {
          const href = safeHref(this.s.slice(link.urlStart, link.urlEnd).replace(/^<|>$/g, ""));
          flush();
          if (href) {
            const a = externalLink(doc, href, "unicite-link");
            this.spans(k + 1, link.labelEnd, a, false);
            parent.append(a);
          } else {
            parent.append(doc.createTextNode(cleanText(this.s.slice(k, link.end))));
          }
          k = link.end;
          continue;
        }
      }
      if (ch === "<") {
        const auto = /^<(https?:\/\/[^\s<>]+)>/i.exec(this.s.slice(k, end));
        const href = auto && safeHref(auto[1]);
        if (href) {
          flush();
          const a = externalLink(doc, href, "unicite-link");
          a.textContent = cleanText(auto[1]);
          parent.append(a);
          k += auto[0].length;
          continue;
        }
      }
      if ((ch === "h" || ch === "H") && (k === start || /[\s(]/.test(this.s[k - 1]))) {
        const bare = /^https?:\/\/[^\s<>]+/i.exec(this.s.slice(k, end));
        if (bare) {
          let url = bare[0];
          let trimmed = url.replace(/[.,;:!?'"’”]+$/, "");
          if (trimmed.endsWith(")") && !trimmed.includes("(")) trimmed = trimmed.slice(0, -1);
          url = trimmed;
          // A URL running into a marker stops before it.
          for (let t = 1; t < url.length; t += 1) {
            if (this.markerAt(k + t, end)) {
              url = url.slice(0, t);
              break;
            }
          }
          const href = safeHref(url);
          if (href) {
            flush();
            const a = externalLink(doc, href, "unicite-link");
            a.textContent = cleanText(url);
            parent.append(a);
            k += url.length;
            continue;
          }
        }
      }
      buffer += ch;
      k += 1;
    }
    flush();
  }
}

/** A DocumentFragment with `text` rendered as (safe) Markdown, without citation markers. */
export function renderMarkdown(text, { document: doc = globalThis.document } = {}) {
  return new Renderer(doc, new Map(), () => []).render(typeof text === "string" ? text : "");
}

// --- streaming text ----------------------------------------------------------------------------

// A marker the model has started but not finished: "[", "[1", "[1,", "[[S:2", "[[S:2]"...
const PARTIAL_MARKER = /(?:\[\[(?:S(?::[\d\s,]*)?)?\]?|\[\d*(?:[ \t]*[,–-][ \t]*\d*)*)$/;
// Markers in streamed text: [1], [1, 3], [2-4], and the generation prompt's [[S:1,3]].
const STREAM_MARKER = /\[\[S:[ \t]*(\d+(?:[ \t]*,[ \t]*\d+)*)[ \t]*\]\]|\[(\d+(?:[ \t]*[,–-][ \t]*\d+)*)\]/g;

/** The streamed text without a half-typed marker at its end (shown once it closes). */
export function visibleText(text) {
  if (typeof text !== "string") return "";
  const match = PARTIAL_MARKER.exec(text);
  return match ? text.slice(0, match.index) : text;
}

function numbersOf(list) {
  const numbers = [];
  for (const part of list.split(",")) {
    const range = /^\s*(\d+)\s*[–-]\s*(\d+)\s*$/.exec(part);
    if (range) {
      const [a, b] = [parseInt(range[1], 10), parseInt(range[2], 10)];
      if (b >= a && b - a < 50) for (let n = a; n <= b; n += 1) numbers.push(n);
      continue;
    }
    const n = parseInt(part, 10);
    if (Number.isInteger(n)) numbers.push(n);
  }
  return [...new Set(numbers)].filter((n) => n > 0);
}

function provisionalMarkers(text) {
  const markers = new Map();
  STREAM_MARKER.lastIndex = 0;
  let match;
  while ((match = STREAM_MARKER.exec(text)) !== null) {
    const numbers = numbersOf(match[1] ?? match[2]);
    if (numbers.length) {
      markers.set(match.index, { start: match.index, end: match.index + match[0].length, numbers });
    }
  }
  return markers;
}

/** The streaming body: Markdown, markers shown as provisional plain `[n]`. */
function renderStreamingBody(text, doc) {
  const shown = visibleText(text);
  const makeMarker = (marker) =>
    marker.numbers.map((n) => el(doc, "sup", "unicite-cite unicite-provisional", `[${n}]`));
  return new Renderer(doc, provisionalMarkers(shown), makeMarker).render(shown);
}

// --- the history document ----------------------------------------------------------------------

function sourcesOf(documentData) {
  const entries = documentData?.metadata?.citations;
  const sources = new Map();
  if (!Array.isArray(entries)) return sources;
  entries.forEach((entry, index) => {
    // Marker [n] opens metadata.citations[n - 1]: an entry numbered otherwise is not used.
    if (entry && typeof entry === "object" && entry.number === index + 1) sources.set(index + 1, entry);
  });
  return sources;
}

function isSpan(value, length) {
  return (
    Array.isArray(value) &&
    value.length === 2 &&
    Number.isInteger(value[0]) &&
    Number.isInteger(value[1]) &&
    value[0] >= 0 &&
    value[0] < value[1] &&
    value[1] <= length
  );
}

/** The markers of a history document, by their UTF-16 start in the content. */
function finalMarkers(content, sources) {
  const found = new Map();
  for (const [number, entry] of sources) {
    const spans = Array.isArray(entry.spans) ? entry.spans : [];
    for (const span of spans) {
      if (!span || typeof span !== "object") continue;
      const utf16 = span.marker?.utf16;
      if (!isSpan(utf16, content.length)) continue;
      const [start, end] = utf16;
      let marker = found.get(start);
      if (!marker) {
        marker = { start, end, numbers: [], spans: new Map() };
        found.set(start, marker);
      } else if (marker.end !== end) {
        continue;
      }
      const numbers = Array.isArray(span.sources) && span.sources.length ? span.sources : [number];
      for (const n of numbers) {
        if (!sources.has(n)) continue;
        if (!marker.numbers.includes(n)) marker.numbers.push(n);
        if (!marker.spans.has(n)) marker.spans.set(n, { span, first: numbers[0] === n });
      }
    }
  }
  // Keep markers whose text names exactly their numbers, in order; drop overlapping ones.
  const markers = new Map();
  let reach = -1;
  for (const marker of [...found.values()].sort((a, b) => a.start - b.start)) {
    if (marker.start < reach) continue;
    const written = [];
    const text = content.slice(marker.start, marker.end);
    const re = /\[\[S:([\d\s,]+)\]\]|\[([\d\s,–-]+)\]/g;
    let match;
    while ((match = re.exec(text)) !== null) written.push(...numbersOf(match[1] ?? match[2]));
    const numbers = marker.numbers.filter((n) => written.includes(n));
    if (!numbers.length) continue;
    numbers.sort((a, b) => written.indexOf(a) - written.indexOf(b));
    marker.numbers = numbers;
    markers.set(marker.start, marker);
    reach = marker.end;
  }
  return markers;
}

function sourceLabel(entry, number, labels) {
  const title = oneLine(entry.title);
  if (title) return title;
  const domain = oneLine(entry.domain);
  if (domain) return domain;
  const href = safeHref(entry.href);
  if (href) return href;
  return `${labels.source} ${number}`;
}

function tooltip(doc, id, entry, number, use, labels) {
  const tip = el(doc, "span", "unicite-tip");
  tip.setAttribute("role", "tooltip");
  tip.id = id;
  tip.append(el(doc, "span", "unicite-tip-title", cut(sourceLabel(entry, number, labels), 160)));
  const domain = oneLine(entry.domain);
  if (domain && domain !== oneLine(entry.title)) tip.append(el(doc, "span", "unicite-tip-domain", domain));
  const span = use?.span;
  // A quote is the cited text of the citation's first source.
  const quote = use?.first ? oneLine(span?.quote) : "";
  if (quote) {
    const holder = el(doc, "span", "unicite-tip-quote");
    if (span.verified === true) {
      holder.classList.add("unicite-verified");
      holder.append(el(doc, "mark", null, `“${cut(quote, QUOTE_LIMIT)}”`));
      holder.append(el(doc, "span", "unicite-verified-label", labels.verified));
    } else {
      holder.append(el(doc, "q", null, cut(quote, QUOTE_LIMIT)));
    }
    tip.append(holder);
  } else {
    const snippet = oneLine(entry.snippet);
    if (snippet) tip.append(el(doc, "span", "unicite-tip-snippet", cut(snippet, QUOTE_LIMIT)));
  }
  return tip;
}

function sourceList(doc, prefix, entries, fallback, labels) {
  const section = el(doc, "section", fallback ? "unicite-sources unicite-sources-fallback" : "unicite-sources");
  section.setAttribute("aria-labelledby", `${prefix}-sources`);
  const heading = el(doc, "h4", "unicite-sources-title", labels.sources);
  heading.id = `${prefix}-sources`;
  section.append(heading);
  const list = el(doc, "ol", "unicite-sources-list");
  for (const [number, entry] of entries) {
    const li = el(doc, "li", "unicite-source");
    li.id = `${prefix}-src-${number}`;
    li.setAttribute("value", String(number));
    li.setAttribute("tabindex", "-1");
    li.dataset.source = String(number);
    const href = safeHref(entry.href);
    const label = cut(sourceLabel(entry, number, labels), 300);
    if (href) {
      const a = externalLink(doc, href, "unicite-source-link");
      a.textContent = label;
      li.append(a);
    } else {
      li.append(el(doc, "span", "unicite-source-title", label));
    }
    const domain = oneLine(entry.domain);
    if (domain && domain !== label) {
      li.append(doc.createTextNode(" "));
      li.append(el(doc, "span", "unicite-domain", domain));
    }
    list.append(li);
  }
  section.append(list);
  return section;
}

function listed(documentData, sources) {
  const hasMarkers = documentData?.metadata?.has_markers === true;
  const all = [...sources];
  if (!all.length) return { entries: [], fallback: false };
  const cited = all.filter(([, entry]) => entry.cited === true);
  if (hasMarkers && cited.length) return { entries: cited, fallback: false };
  if (!hasMarkers) return { entries: all, fallback: true };
  return { entries: cited, fallback: false };
}

function article(doc, prefix, messageId, state) {
  const node = el(doc, "article", "unicite-message");
  node.id = prefix;
  if (typeof messageId === "string" && messageId) node.dataset.messageId = messageId;
  node.dataset.state = state;
  node.setAttribute("aria-busy", state === "streaming" ? "true" : "false");
  return node;
}

function onMarkerClick(event) {
  const link = event.target instanceof Element ? event.target.closest("a.unicite-ref-link") : null;
  if (!link || link.getAttribute("target") === "_blank") return;
  const href = link.getAttribute("href") || "";
  if (!href.startsWith("#")) return;
  const item = link.ownerDocument.getElementById(href.slice(1));
  if (!item) return;
  event.preventDefault();
  item.focus();
  item.scrollIntoView({ block: "nearest" });
}

/**
 * The text a copy of the message puts in the clipboard: the content with its markers, then
 * the listed sources as `[n] Title — URL`.
 */
export function copyText(documentData, labels = DEFAULT_LABELS) {
  const content = cleanText(typeof documentData?.content === "string" ? documentData.content : "");
  const sources = sourcesOf(documentData);
  const { entries } = listed(documentData, sources);
  if (!entries.length) return content;
  const lines = entries.map(([number, entry]) => {
    const label = sourceLabel(entry, number, labels);
    const href = safeHref(entry.href);
    return href && href !== label ? `[${number}] ${label} — ${href}` : `[${number}] ${label}`;
  });
  return `${content.replace(/\s+$/, "")}\n\n${labels.sources}\n${lines.join("\n")}`;
}

function copyHandler(text) {
  return (event) => {
    if (!event.clipboardData) return;
    event.clipboardData.setData("text/plain", text());
    event.preventDefault();
  };
}

/**
 * The element of a message rendered from its history document (`unicite.wire.history`, the
 * data of `thread.message.completed`): Markdown content, `[n]` markers at the metadata's exact
 * UTF-16 spans linking to `metadata.citations[n - 1].href` (or the Sources list entry when the
 * source has no link), tooltips, and the Sources list (every source, as a fallback, when the
 * text has no marker).
 *
 * Options: `messageId` (defaults to the document's), `prefix` (element ids; derived from the
 * message id), `labels`, `document`.
 */
export function renderMessage(documentData, options = {}) {
  const doc = options.document ?? globalThis.document;
  const labels = { ...DEFAULT_LABELS, ...(options.labels ?? {}) };
  const messageId = options.messageId ?? documentData?.message_id ?? null;
  const prefix = options.prefix ?? messagePrefix(messageId);
  const content = typeof documentData?.content === "string" ? documentData.content : "";
  const sources = sourcesOf(documentData);
  const markers = finalMarkers(content, sources);
  let tips = 0;
  const makeMarker = (marker) =>
    marker.numbers.map((number) => {
      const entry = sources.get(number);
      const sup = el(doc, "sup", "unicite-cite");
      sup.dataset.source = String(number);
      const href = safeHref(entry.href);
      const link = href ? externalLink(doc, href, "unicite-ref-link") : el(doc, "a", "unicite-ref-link");
      if (!href) link.setAttribute("href", `#${prefix}-src-${number}`);
      link.textContent = `[${number}]`;
      tips += 1;
      const tipId = `${prefix}-tip-${tips}`;
      link.setAttribute("aria-describedby", tipId);
      sup.append(link, tooltip(doc, tipId, entry, number, marker.spans.get(number), labels));
      return sup;
    });
  const node = article(doc, prefix, messageId, "complete");
  const body = el(doc, "div", "unicite-body");
  body.append(new Renderer(doc, markers, makeMarker).render(content));
  node.append(body);
  const { entries, fallback } = listed(documentData, sources);
  if (entries.length) node.append(sourceList(doc, prefix, entries, fallback, labels));
  node.addEventListener("click", onMarkerClick);
  node.addEventListener("copy", copyHandler(() => copyText(documentData, labels)));
  return node;
}

// --- live messages -----------------------------------------------------------------------------

/**
 * One message on the page, live or reloaded. `element` is its current element (replaced when
 * the answer completes). Feed it the protocol's events with `handle(type, data, id)`, or call
 * `delta`, `reset`, `complete` and `fail` directly.
 */
export class MessageView {
  constructor({ messageId = null, prefix, labels, document: doc, onStop = null } = {}) {
    this.document = doc ?? globalThis.document;
    this.messageId = messageId;
    this.prefix = prefix ?? messagePrefix(messageId);
    this.labels = { ...DEFAULT_LABELS, ...(labels ?? {}) };
    this.text = "";
    this.state = "streaming";
    this.lastEventId = 0;
    this.history = null;
    this.element = article(this.document, this.prefix, messageId, "streaming");
    this.body = el(this.document, "div", "unicite-body");
    this.element.append(this.body);
    this.element.addEventListener("copy", copyHandler(() => cleanText(visibleText(this.text))));
    this.stopButton = null;
    if (typeof onStop === "function") {
      // A stop button while the answer streams: the server cancels it and sends what it kept.
      const button = el(this.document, "button", "unicite-stop", this.labels.stop);
      button.type = "button";
      button.addEventListener("click", () => {
        if (this.state !== "streaming") return;
        button.disabled = true;
        onStop(this);
      });
      this.stopButton = button;
      this.element.append(button);
    }
  }

  /** A message rendered from its history document. */
  static fromHistory(documentData, options = {}) {
    const view = new MessageView({ messageId: documentData?.message_id ?? null, ...options });
    view.complete(documentData);
    return view;
  }

  /** Apply one protocol event; events already seen (by their numeric id) are skipped. */
  handle(type, data, id) {
    const sequence = typeof id === "string" && /^\d+$/.test(id) ? parseInt(id, 10) : null;
    if (sequence !== null) {
      if (sequence <= this.lastEventId) return;
      this.lastEventId = sequence;
    }
    if (this.state !== "streaming") return;
    if (type === EVENTS.delta && typeof data?.delta === "string") this.delta(data.delta);
    else if (type === EVENTS.reset) this.reset();
    else if (type === EVENTS.completed) this.complete(data);
    else if (type === EVENTS.cancelled) this.stop(data);
    else if (type === EVENTS.error) this.fail(typeof data?.error === "string" ? data.error : "");
  }

  /** Append streamed text. */
  delta(text) {
    if (this.state !== "streaming" || typeof text !== "string") return;
    this.text += text;
    this.render();
  }

  /** Discard the text shown so far (the answer starts again). */
  reset() {
    if (this.state !== "streaming") return;
    this.text = "";
    this.render();
  }

  render() {
    this.body.replaceChildren(renderStreamingBody(this.text, this.document));
  }

  /** Show the final answer: the history document, rendered as a reload renders it. */
  complete(documentData) {
    const fresh = renderMessage(documentData, {
      messageId: this.messageId ?? documentData?.message_id ?? null,
      prefix: this.prefix,
      labels: this.labels,
      document: this.document,
    });
    this.history = documentData;
    this.state = "complete";
    this.element.replaceWith(fresh);
    this.element = fresh;
    this.body = fresh.querySelector(".unicite-body");
  }

  /**
   * The answer was stopped: show what it kept (its history document, cited as far as it
   * went), rendered as a reload renders it, and say it was stopped.
   */
  stop(documentData) {
    this.complete(documentData);
    this.state = "stopped";
    this.element.dataset.state = "stopped";
    const notice = el(this.document, "div", "unicite-stopped", this.labels.stopped);
    notice.setAttribute("role", "status");
    this.element.append(notice);
  }

  /** The message broke off: keep what was shown (uncited) and say so. */
  fail(error) {
    if (this.state === "complete" || this.state === "stopped") return;
    this.state = "error";
    this.stopButton?.remove();
    this.element.dataset.state = "error";
    this.element.setAttribute("aria-busy", "false");
    this.body.replaceChildren(renderStreamingBody(this.text, this.document));
    const detail = oneLine(error);
    const notice = el(this.document, "div", "unicite-error", detail ? `${this.labels.brokeOff}: ${detail}` : this.labels.brokeOff);
    notice.setAttribute("role", "alert");
    this.element.querySelector(".unicite-error")?.remove();
    this.element.append(notice);
  }
}

/**
 * Follow a message's SSE stream (`unicite` protocol) into a `MessageView`. The browser's
 * EventSource reconnects on its own, sending `Last-Event-ID`; the stream is closed once the
 * message completed or broke off. Returns `{ source, close() }`.
 */
export function subscribe(view, url, { EventSource: Source = globalThis.EventSource, onDone } = {}) {
  const source = new Source(url);
  source.addEventListener("error", () => {
    // A refused connection (the message is unknown): the browser gives up, say so.
    if (source.readyState === 2 && view.state === "streaming") view.fail("");
  });
  const done = () => {
    source.close();
    if (typeof onDone === "function") onDone(view);
  };
  for (const type of Object.values(EVENTS)) {
    source.addEventListener(type, (event) => {
      let data;
      try {
        data = JSON.parse(event.data);
      } catch {
        return;
      }
      view.handle(type, data, event.lastEventId);
      if (type === EVENTS.completed || type === EVENTS.cancelled || type === EVENTS.error) done();
    });
  }
  return { source, close: () => source.close() };
}

// --- a thread ----------------------------------------------------------------------------------

/** Several turns on one page: each a question and its message, ids prefixed per message. */
export class ThreadView {
  constructor(container, options = {}) {
    this.container = container;
    this.options = options;
    this.views = new Map();
  }

  /** Append a turn; returns its `MessageView` (streaming until `complete` or `fail`). */
  addTurn({ question, messageId = null, onStop = null } = {}) {
    const doc = this.container.ownerDocument;
    const turn = el(doc, "section", "unicite-turn");
    if (messageId) turn.dataset.messageId = messageId;
    if (typeof question === "string" && question) {
      turn.append(el(doc, "div", "unicite-question", cleanText(question)));
    }
    const view = new MessageView({
      messageId,
      labels: this.options.labels,
      document: doc,
      onStop,
    });
    turn.append(view.element);
    this.container.append(turn);
    if (messageId) this.views.set(messageId, view);
    return view;
  }

  /** The view of a message already on the page. */
  view(messageId) {
    return this.views.get(messageId) ?? null;
  }

  /** Remove every turn. */
  clear() {
    this.container.replaceChildren();
    this.views.clear();
  }
}
