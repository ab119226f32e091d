"""See what a tokenizer did to a text: tokens coloured in the terminal, or a self-contained HTML page (token
boundaries coloured, id and bytes on hover, bytes-per-token statistics). `bytepair viz` uses these.

A byte-level token can hold part of a character (an emoji is often two or three tokens); such tokens are
shown together as one group over the character(s) they share, with all their ids.

>>> import bytepair
>>> tok = bytepair.train(["the cat sat on the mat"] * 10, vocab_size=262)
>>> [(s.text, s.ids) for s in segments(tok, "the cat")]
[('the', [258]), (' cat', [260])]
>>> print(terminal(tok, "the cat", color=False))
the| cat
"""

from __future__ import annotations

import html
import json
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass
from typing import Literal

from ._tokenizer import Tokenizer
from .describe import escape, show_token

__all__ = ["MAX_PAGE_TOKENS", "Segment", "Stats", "html_page", "segments", "stats", "terminal"]

# Background colours that black text reads well on; neighbouring tokens always differ.
_ANSI_BACKGROUNDS = [153, 229, 157, 218, 223, 189, 195, 230]
_HTML_BACKGROUNDS = ["#c6e2ff", "#fff3b0", "#c8f7c5", "#ffd1dc", "#ffe0b2", "#e1d5f5", "#c9f1f3", "#f0f4c3"]


# Unicode's White_Space: what the core's patterns take for \s (Python's str.isspace also counts U+001C-U+001F).
_WHITE_SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


@dataclass
class Segment:
    """A stretch of the text and the tokens it became.

    ids: one id for an ordinary token; several when byte-level tokens split a character between them (the
    group is shown as one segment); none for text the pre-tokenizer drops (spaces with pattern="whitespace").
    """

    text: str
    ids: list[int]
    special: bool = False

    @property
    def partial(self) -> bool:
        """Several tokens that share a character."""
        return len(self.ids) > 1


class PerToken:
    """Ratios of a text's size to its number of tokens (for classes with `tokens`, `bytes`, `characters`)."""

    tokens: int
    bytes: int
    characters: int

    @property
    def bytes_per_token(self) -> float:
        return self.bytes / self.tokens if self.tokens else 0.0

    @property
    def chars_per_token(self) -> float:
        return self.characters / self.tokens if self.tokens else 0.0


@dataclass
class Stats(PerToken):
    tokens: int
    characters: int
    bytes: int
    distinct: int

    def line(self) -> str:
        return (
            f"{self.tokens} tokens ({self.distinct} distinct) for {self.characters} characters, {self.bytes} "
            f"bytes: {self.bytes_per_token:.2f} bytes/token, {self.chars_per_token:.2f} characters/token"
        )


def segments(tok: Tokenizer, text: str, *, allowed_special: Literal["all"] | Collection[str] = "all") -> list[Segment]:
    """The text cut where its tokens begin and end (see `Segment`). Special tokens in the text are encoded as
    special tokens (allowed_special="all") unless you pass another policy."""
    data = text.encode("utf-8")
    specials = set(tok.special_tokens)
    try:
        tokens = tok.encode_with_offsets(
            text,
            unit="byte",
            allowed_special=allowed_special,
            disallowed_special=(),
        )
    except ValueError as e:
        if "offsets need" not in str(e):
            raise
        return _aligned_segments(tok, text, allowed_special)
    out: list[Segment] = []
    position = 0  # bytes of `data` shown so far
    group: list[int] = []
    group_start = 0
    for id, start, end in tokens:
        if not group:
            if start > position:  # text the pre-tokenizer dropped
                out.append(Segment(data[position:start].decode("utf-8"), []))
            group_start = start
        group.append(id)
        position = end
        piece = data[group_start:end]
        try:
            shown = piece.decode("utf-8")
        except UnicodeDecodeError:
            continue  # the token ends inside a character: the next one finishes it
        display = tok.id_to_token(id)
        out.append(Segment(shown, group, special=len(group) == 1 and display in specials))
        group = []
    if group:  # cannot happen for text from a str, but never lose data
        out.append(Segment(data[group_start:position].decode("utf-8", errors="replace"), group))
        position = len(data)
    if position < len(data):
        out.append(Segment(data[position:].decode("utf-8"), []))
    return out


def _aligned_segments(tok: Tokenizer, text: str, allowed_special: Literal["all"] | Collection[str]) -> list[Segment]:
    """Segments for tokenizers that change the text (lowercase, dropped whitespace, unk_token), which have no
    exact offsets: each token is found in the text after the previous one (what lies between was dropped by
    the pre-tokenizer); an unknown-character token covers one character. If the tokens cannot be found, they
    are shown as they are."""
    ids = tok.encode(text, allowed_special=allowed_special, disallowed_special=())
    specials = set(tok.special_tokens)
    unk = tok.settings["unk_token"]
    unk_id = tok.token_to_id(unk) if isinstance(unk, str) else None
    folded = text.lower() if tok.settings["lowercase"] else text
    drops_spaces = tok.settings["pattern"] == "whitespace"

    def as_tokens() -> list[Segment]:
        return [Segment(tok.decode([i]), [i], special=(tok.id_to_token(i) or "") in specials) for i in ids]

    if len(folded) != len(text):  # lowercasing changed lengths: positions cannot be matched
        return as_tokens()
    out: list[Segment] = []
    pos = 0
    pending = b""
    group: list[int] = []
    for id in ids:
        display = tok.id_to_token(id) or ""
        if id == unk_id and not group:
            start = pos
            while drops_spaces and pos < len(text) and text[pos] in _WHITE_SPACE:
                pos += 1
            found, length, is_special = pos, 1, False
            pos = start
        else:
            is_special = display in specials and not group
            if is_special:
                surface, found = display, text.find(display, pos)
            else:
                group.append(id)
                pending += tok.token_bytes(id)
                try:
                    surface = pending.decode("utf-8")
                except UnicodeDecodeError:
                    continue
                found = folded.find(surface, pos)
            length = len(surface)
        if found < 0 or found + length > len(text):
            return as_tokens()
        if found > pos:
            out.append(Segment(text[pos:found], []))
        out.append(Segment(text[found : found + length], group or [id], special=is_special))
        pos = found + length
        group, pending = [], b""
    if pos < len(text):
        out.append(Segment(text[pos:], []))
    return out


def stats(text: str, segs: list[Segment]) -> Stats:
    ids = [i for s in segs for i in s.ids]
    return Stats(tokens=len(ids), characters=len(text), bytes=len(text.encode("utf-8")), distinct=len(set(ids)))


def terminal(
    tok: Tokenizer,
    text: str,
    *,
    color: bool = True,
    ids: bool = False,
    allowed_special: Literal["all"] | Collection[str] = "all",
) -> str:
    """The text with each token on its own background colour (ANSI 256 colours); without colour, tokens are
    separated by `|`. Line breaks show as ↵ (then break the line), tabs as ⇥, other invisible characters
    escaped. With `ids`, each token is followed by its id in brackets."""
    out: list[str] = []
    for n, seg in enumerate(segments(tok, text, allowed_special=allowed_special)):
        shown = _visible(seg.text)
        if ids and seg.ids:
            shown += "[" + ",".join(map(str, seg.ids)) + "]"
        if not seg.ids:  # dropped text: no token
            out.append(f"\x1b[2m{shown}\x1b[0m" if color else shown)
            continue
        if not color:
            out.append(("|" if out else "") + shown)
            continue
        if seg.special:
            style = "\x1b[1;97;45m"
        else:
            style = f"\x1b[30;48;5;{_ANSI_BACKGROUNDS[n % len(_ANSI_BACKGROUNDS)]}m" + (
                "\x1b[4m" if seg.partial else ""
            )
        # Colours are reset before each line break so that they do not run to the end of the terminal line.
        out.append(style + shown.replace("\n", "\x1b[0m\n" + style) + "\x1b[0m")
    return "".join(out)


def _visible(text: str) -> str:
    out = []
    for c in text:
        if c == "\n":
            out.append("↵\n")
        elif c == "\t":
            out.append("⇥")
        elif c == "\r":
            out.append("␍")
        elif c != " " and c not in '\\"' and escape(c) != c:
            out.append(escape(c))
        else:
            out.append(c)
    return "".join(out)


#: Tokens an HTML page draws at most (`html_page`'s default): a page of 300 000 tokens (1 MB of text) was 29 MB
#: of HTML that a browser took a minute to draw; 20 000 tokens load in about a second.
MAX_PAGE_TOKENS = 20_000


def html_page(
    tok: Tokenizer,
    text: str,
    *,
    title: str | None = None,
    name: str | None = None,
    allowed_special: Literal["all"] | Collection[str] = "all",
    max_tokens: int | None = MAX_PAGE_TOKENS,
) -> str:
    """A self-contained HTML page (no external files or scripts): the text with token boundaries coloured,
    each token's id, bytes and text shown on hover (and every other occurrence of it highlighted), a switch
    that writes the ids into the text, and statistics (tokens, bytes per token, characters per token, the most
    frequent tokens). The page draws the text's first `max_tokens` tokens (None: all) and says so when it stops
    short; the statistics are the whole text's.

    >>> import bytepair
    >>> tok = bytepair.train(["the cat sat on the mat"] * 10, vocab_size=262)
    >>> page = html_page(tok, "the cat sat " * 10, max_tokens=5)
    >>> page.count('class="t '), "the first 5 of 50 tokens" in page
    (5, True)
    """
    if max_tokens is not None and (isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1):
        raise ValueError(f"max_tokens must be None (all) or an int >= 1, got {max_tokens!r}")
    segs = segments(tok, text, allowed_special=allowed_special)
    st = stats(text, segs)
    counts = Counter(i for s in segs for i in s.ids)
    shown, notice = _first_tokens(segs, max_tokens, st)
    spans: list[str] = []
    for n, seg in enumerate(shown):
        body = _html_text(seg.text)
        if not seg.ids:
            spans.append(f'<span class="gap" title="dropped by the pre-tokenizer">{body}</span>')
            continue
        classes = ["t", "special" if seg.special else f"c{n % len(_HTML_BACKGROUNDS)}"]
        if seg.partial:
            classes.append("partial")
        info = (
            ("id " if len(seg.ids) == 1 else "ids ")
            + ", ".join(map(str, seg.ids))
            + " · "
            + " + ".join(show_token(tok, i) for i in seg.ids)
        )
        nbytes = len(seg.text.encode("utf-8"))
        spans.append(
            f'<span class="{" ".join(classes)}" data-ids="{" ".join(map(str, seg.ids))}" '
            f'data-bytes="{nbytes}" title="{html.escape(info)}">{body}</span>'
        )
    top = "".join(
        f"<tr><td>{i}</td><td><code>{html.escape(show_token(tok, i))}</code></td><td>{c}</td></tr>"
        for i, c in counts.most_common(10)
    )
    colours = "\n".join(f".c{k} {{ background: {c}; }}" for k, c in enumerate(_HTML_BACKGROUNDS))
    heading = title or "bytepair: tokens"
    description = html.escape(name or repr(tok))
    return _PAGE.format(
        title=html.escape(heading),
        description=description,
        colours=colours,
        notice=notice,
        text="".join(spans),
        tokens=st.tokens,
        distinct=st.distinct,
        characters=st.characters,
        bytes=st.bytes,
        bpt=f"{st.bytes_per_token:.2f}",
        cpt=f"{st.chars_per_token:.2f}",
        top=top,
        data=html.escape(json.dumps({"tokens": st.tokens, "bytes": st.bytes, "characters": st.characters})),
    )


def _first_tokens(segs: list[Segment], max_tokens: int | None, st: Stats) -> tuple[list[Segment], str]:
    """The segments holding the first `max_tokens` tokens, and the page's notice when that is not all of them."""
    if max_tokens is None or st.tokens <= max_tokens:
        return segs, ""
    shown: list[Segment] = []
    tokens = characters = 0
    for seg in segs:
        if tokens + len(seg.ids) > max_tokens:
            break
        shown.append(seg)
        tokens += len(seg.ids)
        characters += len(seg.text)
    notice = (
        f'<p class="notice" id="truncated">This page shows the first {tokens:,} of {st.tokens:,} tokens (the first '
        f"{characters:,} of {st.characters:,} characters): a page holding them all would take a browser minutes to "
        f"draw. The numbers above and the most frequent tokens are the whole text's. To see more, pass "
        f"<code>--max-tokens</code> to <code>bytepair viz</code>, or view a part of the text.</p>"
    )
    return shown, notice


def _html_text(text: str) -> str:
    """Token text for the page: line breaks get a visible ↵ (not part of the text: it cannot be selected),
    other invisible characters a visible escape."""
    out = []
    for c in text:
        if c == "\n":
            out.append('<span class="mark">↵</span>\n')
        elif c == "\r":
            out.append('<span class="mark">␍</span>')
        elif c == "\t":
            out.append("\t")
        elif c != " " and (ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0):
            out.append(f'<span class="mark">{html.escape(escape(c))}</span>')
        else:
            out.append(html.escape(c))
    return "".join(out)


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="bytepair">
<title>{title}</title>
<style>
body {{ font: 15px/1.5 system-ui, sans-serif; margin: 0; color: #222; background: #fafafa; }}
header {{ position: sticky; top: 0; background: #fff; border-bottom: 1px solid #ddd; padding: 10px 20px; }}
h1 {{ font-size: 18px; margin: 0 0 4px; }}
.tokenizer {{ font-family: ui-monospace, monospace; font-size: 12px; color: #555; margin: 0 0 6px; }}
.stats {{ display: flex; flex-wrap: wrap; gap: 4px 18px; margin: 0; }}
.stats div {{ display: flex; gap: 6px; }} .stats dt {{ color: #666; }} .stats dd {{ margin: 0; font-weight: 600; }}
#info {{ font-family: ui-monospace, monospace; font-size: 13px; min-height: 1.5em; margin-top: 6px; color: #333; }}
label {{ font-size: 13px; color: #444; }}
main {{ display: flex; flex-wrap: wrap; gap: 24px; padding: 16px 20px; align-items: flex-start; }}
#text {{ flex: 1 1 420px; min-width: 0; font: 15px/1.9 ui-monospace, monospace; white-space: pre-wrap;
        overflow-wrap: anywhere; background: #fff; border: 1px solid #ddd; padding: 12px; margin: 0; }}
.notice {{ margin: 12px 20px 0; padding: 8px 12px; background: #fff8e1; border: 1px solid #f0d98c; font-size: 13px; }}
.t {{ border-radius: 3px; }}
{colours}
.t.special {{ background: #5b2a86; color: #fff; }}
.t.partial {{ outline: 1px dashed #a33; }}
.t.same {{ box-shadow: 0 0 0 2px #e4572e; }}
.t:hover {{ box-shadow: 0 0 0 2px #222; }}
.gap {{ color: #999; }}
.mark {{ color: #888; user-select: none; }}
body.show-ids .t::after {{ content: attr(data-ids); font-size: 10px; vertical-align: sub; color: #555;
                          margin-left: 1px; user-select: none; }}
aside {{ flex: 0 1 280px; min-width: 0; max-width: 100%; font-size: 13px; }}
aside table {{ border-collapse: collapse; width: 100%; table-layout: fixed; }}
aside td {{ border-bottom: 1px solid #eee; padding: 2px 4px; vertical-align: top; }}
aside td:first-child, aside td:last-child {{ width: 4.5em; }}
aside code {{ white-space: pre-wrap; overflow-wrap: anywhere; }}
</style>
</head>
<body>
<header>
<h1>{title}</h1>
<p class="tokenizer">{description}</p>
<dl class="stats" id="stats" data-stats="{data}">
<div><dt>tokens</dt><dd id="n-tokens">{tokens}</dd></div>
<div><dt>distinct</dt><dd>{distinct}</dd></div>
<div><dt>characters</dt><dd>{characters}</dd></div>
<div><dt>bytes</dt><dd>{bytes}</dd></div>
<div><dt>bytes / token</dt><dd id="bytes-per-token">{bpt}</dd></div>
<div><dt>characters / token</dt><dd>{cpt}</dd></div>
</dl>
<label><input type="checkbox" id="show-ids"> show ids</label>
<div id="info">Point at a token to see its id and bytes.</div>
</header>
{notice}
<main>
<pre id="text">{text}</pre>
<aside><b>Most frequent tokens</b>
<table><tr><td>id</td><td>token</td><td>count</td></tr>{top}</table></aside>
</main>
<script>
(function () {{
  var info = document.getElementById("info");
  var marked = [];
  function clear() {{ marked.forEach(function (e) {{ e.classList.remove("same"); }}); marked = []; }}
  document.getElementById("text").addEventListener("mouseover", function (event) {{
    var t = event.target.closest(".t");
    if (!t) return;
    clear();
    var same = document.querySelectorAll('.t[data-ids="' + t.dataset.ids + '"]');
    same.forEach(function (e) {{ e.classList.add("same"); marked.push(e); }});
    info.textContent = t.title + " \\u00b7 " + t.dataset.bytes + " bytes \\u00b7 " + same.length +
      (same.length > 1 ? " times" : " time") + " in this text";
  }});
  document.getElementById("show-ids").addEventListener("change", function (event) {{
    document.body.classList.toggle("show-ids", event.target.checked);
  }});
}})();
</script>
</body>
</html>
"""
