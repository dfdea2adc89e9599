#!/usr/bin/env python3
"""Makes N copies of a text corpus for scaling runs (used by scripts/bench.sh).

Input: the `documents` of an ingested corpus as JSON lines with `doc_id`,
`url` and `text` (what `pipeline query --format json` prints). Output:
`copy-000.jsonl` ... `copy-<N-1>.jsonl` in OUT_DIR, records with `id`, `url`
and `text` (the pipeline's JSON Lines input).

Why not plain copies: if every copy were a near-duplicate of every other,
each document would have N near-duplicates and the pairs to verify would
grow as N^2 by construction, so the run could never show linear growth.
Instead, copy 0 keeps the corpus's words, and in copy k > 0:

- most documents are *translated*: every content word (4+ characters, not
  a number, and in less than half of the documents, which leaves the stop
  words alone) is
  replaced through a per-copy permutation of the corpus vocabulary within
  words of the same script and length. The copy keeps the corpus's
  statistics (word lengths, document frequencies, sentence structure, the
  language) and its own internal near-duplicates (a permutation maps
  near-duplicate texts to near-duplicate texts), but shares only function
  words with the other copies;
- a share of documents (--dup-rate, default 5%) stays untranslated, so they
  are near-duplicates of their original in copy 0: cross-copy
  near-duplicates exist at every scale, in proportion to the corpus size;
- in every document of every copy, copy 0 included, one content word is
  dropped from about a third
  of the sentences (chosen by the sentence's own text, so identical sentences
  of near-duplicate documents change alike; this keeps sentence-length
  strings from matching across copies, which real unrelated pages do not),
  and --edits words (default 3) are replaced by random vocabulary words.

With --new-words, the content words of copy k > 0 are not taken from the
corpus's vocabulary but made up for that copy (random letters of the
same script and length, one fresh word per corpus word), so the
vocabulary, the document frequencies and the statistics built on them
grow with the number of copies, as they do in a crawl that grows (the
issue "Any crawl size": a series "whose copies bring new words"). Words
of other scripts stay as they are.

Every copy is changed alike, so that each is the same kind of corpus and
a run over N copies costs N times one copy's work if the pipeline is
linear. With --first-as-is, copy 0 is the corpus unchanged (the layout of
the series measured before 2026-11-27): an unchanged page then costs less
than a changed one (on the Javadoc crawl, 2.0 failed comparisons per page
against 4.3: the edits turn exact and close duplicates into pairs that
some methods still propose and verification refuses), so the share of
copy 0, 1/N, weighs on the growth between scales.

Each copy k > 0 is a site of its own: its URLs' hosts get the prefix
`copy-k.` (https://copy-3.docs.example/a.html), as a crawl that grows
meets more sites, each with its own template. With --one-host, copies stay
on the original hosts with the fragment `#copy-k` (the layout of the
series measured before 2026-11-27): each host then holds N translations of
its template, and a template line, found on one page in N of its host,
falls below the boilerplate share ([boilerplate] min_share of the host's
pages) as N grows. On the Javadoc crawl the template lines found went
from 603 at 1 copy to 358 at 8 and 277 at 16, so each copy's text, its
candidate pairs and its comparisons grew with the number of copies: a
property of that layout, not of the crawl's size.

Two more layouts, each for one kind of growth of a real crawl:

--url-copies R (issue 53, "One kept copy per page"): every document of
every copy appears a heavy-tailed number of times, on its own host, under
URL variants a crawler caught in session ids and newsletter links fetches
(`?sid=`, `?PHPSESSID=`, `;jsessionid=`, `?sessionid=`, `utm_*`), with the
same text: most pages once, a few hundreds of times, R times the records
in all. The number of appearances of a page is a discrete Pareto draw,
floor(u^(-1/a)) for a uniform u seeded by its document id, so P(n >= k) =
k^-a; the exponent a is the one (found by bisection on the seeded draws)
that makes the records R times the pages, so the same input and R give the
same crawl. The first appearance is at the page's own URL.

--half-words (issue 54, "flat cost as pages that share a template grow"):
instead of translating, each copy (copy 0 included) keeps its host's
template lines as they are (the lines found on at least 10 distinct texts
of the host and on at least 5% of them, as jobs/boilerplate.sql finds
them) and replaces, in every other line, half its words (seeded by copy,
document and line) by words drawn from the corpus's words in proportion to
their frequency: each line keeps its word count and punctuation, and so
its length and sentence structure, but not its words. Each copy k > 0 is a
site of its own as above. The pages of a copy share their site's template
and sentence structure but not their words, as generated pages, product
pages and forum threads do, so methods propose them and verification
refuses them.

Everything is seeded by the copy number and the document id: the same
input gives the same copies.
"""

import argparse
import hashlib
import json
import random
import re
import sys
from urllib.parse import urlsplit, urlunsplit
from collections import Counter, defaultdict
from pathlib import Path

WORD = re.compile(r"\w+", re.UNICODE)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
KEEP_SHORTER_THAN = 4
# Words in at least this share of the documents are function words: kept.
FREQUENT_SHARE = 0.5


def script_of(word):
    """The writing system of a word, so translated words stay in its language."""
    for ch in word:
        if "\u0400" <= ch <= "\u04ff":
            return "cyrillic"
        if ch.isalpha() and ch.isascii():
            return "latin"
    return "other"


def word_class(word):
    return (script_of(word), len(word))


def copy_url(url, copy, one_host):
    """Copy k's URL: on a host of its own (`copy-k.` + host), or with
    --one-host on the same host with the fragment `#copy-k`."""
    parts = urlsplit(url)
    if one_host or not parts.hostname:
        return f"{url}#copy-{copy}"
    user, at, host = parts.netloc.rpartition("@")
    return urlunsplit(parts._replace(netloc=f"{user}{at}copy-{copy}.{host}"))


def stable_hash(*parts):
    h = hashlib.blake2b("\x1f".join(str(p) for p in parts).encode(), digest_size=8)
    return int.from_bytes(h.digest(), "big")


def read_documents(path):
    docs = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line:
                d = json.loads(line)
                docs.append((str(d["doc_id"]), d.get("url") or "", d.get("text") or ""))
    return docs


def content_vocabulary(docs):
    """Content words by class, and the frequent words that are never changed."""
    df = Counter()
    for _, _, text in docs:
        df.update({w.lower() for w in WORD.findall(text)})
    frequent = {w for w, n in df.items() if n >= FREQUENT_SHARE * len(docs)}
    classes = defaultdict(list)
    for w in sorted(df):
        if len(w) >= KEEP_SHORTER_THAN and w not in frequent and not w.isdigit():
            classes[word_class(w)].append(w)
    return frequent, classes


def is_content(word, frequent):
    lw = word.lower()
    return len(lw) >= KEEP_SHORTER_THAN and lw not in frequent and not lw.isdigit()


def same_case(original, replacement):
    if original[:1].isupper():
        return replacement[:1].upper() + replacement[1:]
    return replacement


def permutation(classes, copy):
    """A per-copy bijection of the content vocabulary, within each class."""
    mapping = {}
    for cls, words in classes.items():
        shuffled = list(words)
        random.Random(f"{copy}:{cls}").shuffle(shuffled)
        mapping.update(zip(words, shuffled))
    return mapping


ALPHABETS = {"latin": "abcdefghijklmnopqrstuvwxyz", "cyrillic": "абвгдежзийклмнопрстуфхцчшщъыьэюя"}


def new_words(classes, copy):
    """A per-copy bijection of the content vocabulary onto made-up words of
    the same script and length that neither the corpus nor another copy
    has (up to the odds of drawing the same letters twice)."""
    mapping = {}
    used = {w for words in classes.values() for w in words}
    for (script, length), words in sorted(classes.items()):
        letters = ALPHABETS.get(script)
        if letters is None:
            continue
        for word in words:
            attempt = 0
            while True:
                rng = random.Random(stable_hash("new", copy, word, attempt))
                made = "".join(rng.choice(letters) for _ in range(length))
                if made not in used:
                    break
                attempt += 1
            used.add(made)
            mapping[word] = made
    return mapping


def drop_words(text, copy, frequent):
    """Drops the second content word of about a third of the sentences."""
    lines = []
    for line in text.split("\n"):
        sentences = []
        for sentence in SENTENCE_END.split(line):
            if stable_hash("drop", copy, sentence) % 3 == 0:
                content = [m for m in WORD.finditer(sentence) if is_content(m.group(), frequent)]
                if len(content) >= 2:
                    m = content[1]
                    sentence = (sentence[: m.start()] + sentence[m.end():]).replace("  ", " ", 1)
            sentences.append(sentence)
        lines.append(" ".join(sentences))
    return "\n".join(lines)


def translate(text, mapping):
    def sub(m):
        w = m.group()
        target = mapping.get(w.lower())
        return same_case(w, target) if target else w

    return WORD.sub(sub, text)


def edit(text, copy, doc_id, edits, frequent, all_words):
    """Replaces `edits` random content words by random vocabulary words."""
    matches = [m for m in WORD.finditer(text) if is_content(m.group(), frequent)]
    if not matches or not all_words:
        return text
    rng = random.Random(f"edit:{copy}:{doc_id}")
    chosen = sorted(rng.sample(range(len(matches)), min(edits, len(matches))), reverse=True)
    for i in chosen:
        m = matches[i]
        text = text[: m.start()] + same_case(m.group(), rng.choice(all_words)) + text[m.end():]
    return text


# Template lines of a host, for --half-words (jobs/boilerplate.sql's rule
# and defaults).
TEMPLATE_MIN_PAGES = 10
TEMPLATE_MIN_SHARE = 0.05


def host_of(url):
    return (urlsplit(url).hostname or "").lower()


def folded(line):
    return " ".join(line.split()).lower()


def template_lines(docs):
    """(host, folded line) of every template line: found on at least
    TEMPLATE_MIN_PAGES distinct texts of its host and on at least
    TEMPLATE_MIN_SHARE of them."""
    texts = defaultdict(set)
    lines = defaultdict(set)
    for _, url, text in docs:
        host = host_of(url)
        if not host:
            continue
        digest = stable_hash(text)
        texts[host].add(digest)
        for line in {folded(l) for l in text.split("\n")}:
            if line:
                lines[(host, line)].add(digest)
    return {
        key
        for key, on in lines.items()
        if len(on) >= TEMPLATE_MIN_PAGES and len(on) >= TEMPLATE_MIN_SHARE * len(texts[key[0]])
    }


def word_weights(docs):
    """The corpus's words (lowercased) and their cumulative counts, to draw
    words in proportion to their frequency."""
    counts = Counter()
    for _, _, text in docs:
        counts.update(w.lower() for w in WORD.findall(text))
    words = sorted(counts)
    cumulative, total = [], 0
    for w in words:
        total += counts[w]
        cumulative.append(total)
    return words, cumulative


def half_words(text, url, copy, doc_id, template, words, cumulative):
    """`text` with its host's template lines as they are and half the words
    of every other line replaced by corpus words (see --half-words)."""
    host = host_of(url)
    lines = []
    for n, line in enumerate(text.split("\n")):
        matches = list(WORD.finditer(line))
        if (host, folded(line)) in template or not matches:
            lines.append(line)
            continue
        rng = random.Random(stable_hash("half", copy, doc_id, n))
        k = len(matches) // 2 + (rng.random() < 0.5 if len(matches) % 2 else 0)
        chosen = sorted(rng.sample(range(len(matches)), k), reverse=True)
        drawn = rng.choices(words, cum_weights=cumulative, k=k)
        for i, word in zip(chosen, drawn):
            m = matches[i]
            line = line[: m.start()] + same_case(m.group(), word) + line[m.end():]
        lines.append(line)
    return "\n".join(lines)


# Session and tracking URL variants of --url-copies: a crawler without
# cookies gets a new session id on every visit.
def url_variant(url, doc_id, copy, n):
    """Appearance n > 0 of a page: its URL with a session id or tracking
    parameters, chosen and filled by (copy, document, n)."""
    h = stable_hash("variant", copy, doc_id, n)
    token = f"{h:016x}"
    parts = urlsplit(url)
    query = parts.query + "&" if parts.query else ""
    kind = h % 5
    if kind == 0:
        return urlunsplit(parts._replace(query=f"{query}sid={token[:12]}"))
    if kind == 1:
        return urlunsplit(parts._replace(query=f"{query}PHPSESSID={token}"))
    if kind == 2:
        return urlunsplit(parts._replace(path=f"{parts.path};jsessionid={token.upper()}"))
    if kind == 3:
        return urlunsplit(parts._replace(query=f"{query}sessionid={token[:10]}"))
    campaign = ["newsletter", "twitter", "rss", "partner"][(h >> 8) % 4]
    return urlunsplit(parts._replace(query=f"{query}utm_source={campaign}&utm_medium=link&utm_campaign=c{(h >> 16) % 97}"))


MAX_APPEARANCES = 1000


def appearances(doc_ids, ratio):
    """Appearances of each document (see --url-copies): discrete Pareto
    draws from seeded uniforms, with the exponent that makes their sum
    ratio times the documents (at most MAX_APPEARANCES each)."""
    uniforms = [(stable_hash("appear", d) + 1) / 2**64 for d in doc_ids]

    def draws(a):
        return [min(MAX_APPEARANCES, int(u ** (-1 / a))) for u in uniforms]

    low, high = 0.3, 50.0  # sums fall as the exponent grows
    for _ in range(60):
        mid = (low + high) / 2
        if sum(draws(mid)) > ratio * len(doc_ids):
            low = mid
        else:
            high = mid
    return draws(high)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("documents", help="JSON lines with doc_id, url, text")
    ap.add_argument("out_dir")
    ap.add_argument("copies", type=int)
    ap.add_argument("--dup-rate", type=float, default=0.05, help="share of untranslated (cross-copy) near-duplicates")
    ap.add_argument("--edits", type=int, default=3, help="words replaced per copied document")
    ap.add_argument(
        "--new-words",
        action="store_true",
        help="translate each copy into made-up words of its own, so that the vocabulary grows with the copies",
    )
    ap.add_argument(
        "--one-host",
        action="store_true",
        help="keep every copy on the original hosts (URL fragment #copy-k) instead of a host of its own",
    )
    ap.add_argument(
        "--first-as-is",
        action="store_true",
        help="leave copy 0 unchanged (no dropped or replaced words) instead of changing it like every copy",
    )
    ap.add_argument(
        "--url-copies",
        type=float,
        metavar="R",
        help="each page again under session-id and tracking URLs a heavy-tailed number of times, R times the records",
    )
    ap.add_argument(
        "--half-words",
        action="store_true",
        help="keep each host's template lines and replace half the words of every other line (copy 0 included)",
    )
    args = ap.parse_args()
    if args.copies < 1:
        sys.exit("copies must be at least 1")
    if args.url_copies is not None and args.url_copies < 1:
        sys.exit("--url-copies must be at least 1 (the pages themselves)")
    if args.half_words and (args.new_words or args.first_as_is):
        sys.exit("--half-words changes every copy alike: not with --new-words or --first-as-is")
    docs = read_documents(args.documents)
    if not docs:
        sys.exit(f"{args.documents}: no documents")
    frequent, classes = content_vocabulary(docs)
    all_words = sorted(w for words in classes.values() for w in words)
    if args.half_words:
        template = template_lines(docs)
        words, cumulative = word_weights(docs)
        print(f"{len(template)} template lines kept as they are", file=sys.stderr)
    times = appearances([d for d, _, _ in docs], args.url_copies) if args.url_copies else [1] * len(docs)
    if args.url_copies:
        print(f"{sum(times)} records per copy, a page at most {max(times)} times", file=sys.stderr)
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for copy in range(args.copies):
        if copy == 0:
            mapping = {}
        elif args.new_words:
            mapping = new_words(classes, copy)
        else:
            mapping = permutation(classes, copy)
        translated = 0
        with open(out / f"copy-{copy:03}.jsonl", "w", encoding="utf-8") as f:
            for (doc_id, url, text), times_seen in zip(docs, times):
                if args.half_words:
                    text = half_words(text, url, copy, doc_id, template, words, cumulative)
                elif copy > 0 or not args.first_as_is:
                    keep = copy == 0 or stable_hash("dup", copy, doc_id) % 10_000 < args.dup_rate * 10_000
                    text = drop_words(text, copy, frequent)
                    if not keep:
                        text = translate(text, mapping)
                        translated += 1
                    text = edit(text, copy, doc_id, args.edits, frequent, all_words)
                if copy > 0:
                    url = copy_url(url, copy, args.one_host)
                record = {"id": f"{doc_id}-{copy}", "url": url, "text": text}
                f.write(json.dumps(record, ensure_ascii=False) + "\n")
                for n in range(1, times_seen):
                    variant = url_variant(url, doc_id, copy, n) if url else ""
                    record = {"id": f"{doc_id}-{copy}-{n}", "url": variant, "text": text}
                    f.write(json.dumps(record, ensure_ascii=False) + "\n")
        print(f"copy {copy}: {len(docs)} documents, {translated} translated", file=sys.stderr)


if __name__ == "__main__":
    main()
