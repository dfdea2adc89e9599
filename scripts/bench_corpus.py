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
    args = ap.parse_args()
    if args.copies < 1:
        sys.exit("copies must be at least 1")
    docs = read_documents(args.documents)
    if not docs:
        sys.exit(f"{args.documents}: no documents")
    frequent, classes = content_vocabulary(docs)
    all_words = sorted(w for words in classes.values() for w in words)
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
            for doc_id, url, text in docs:
                if copy > 0 or not args.first_as_is:
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
        print(f"copy {copy}: {len(docs)} documents, {translated} translated", file=sys.stderr)


if __name__ == "__main__":
    main()
