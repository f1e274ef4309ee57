#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The repository stands alone: no tracked file cites a document outside it or reads `../shared`.

    tests/style/self_contained.py [REPO]                     check: list offending lines, exit 1 if any
    tests/style/self_contained.py --fix [--unmodified] [REPO [PATH...]]  rewrite the citations it knows

The wire contract is docs/protocol.md and the architecture docs/architecture.md; the TDX samples the
tests read are under tests/fixtures/. A citation of the former contract (`API.md §2 "Billing"`), of
the product specification (`core-api.md check 1`) or of the shared test data (`testdata/tdx`)
becomes the matching section of those (`docs/protocol.md §2 "Billing"`, `docs/protocol.md §5 check
1`, `tests/fixtures/tdx`); pages under docs/ link relative to themselves (`protocol.md §2`).
--unmodified leaves files alone that git shows modified in the working tree (someone is editing
them) and lists them. Solidity sources are checked but never rewritten: their comments are part
of the bytecode metadata of the committed builds. --fix is idempotent.
"""
import os
import re
import sys

from sweep import modified, options, read_text, report, tracked, write_text

OUTSIDE = re.compile(r"(?<![\w./-])(?:\.\./)*(?:shared/)?(?:API|DESIGN)\.md|\.\./shared\b|ENACT_SHARED_DIR|"
                     r"(?<![\w/-])(?:core-api|trigger-service)\.md|(?<![\w/])testdata/tdx")
SKIP_PREFIXES = ("tests/fixtures/",)
SKIP_NAMES = ("package-lock.json",)
TEXT_EXTS = (".c", ".h", ".cpp", ".hpp", ".cc", ".in", ".js", ".mjs", ".cjs", ".py", ".sh", ".cmake", ".txt",
             ".md", ".sol", ".json", ".toml", ".yml", ".yaml", ".html", ".service", "")

# Section names of the former contract that docs/protocol.md spells differently.
RENAMED = {
    '§2 "ChainSecured (wallet-signed)"': '§2 "ChainSecured"',
    '§4 "Params — webhook"': '§4 "Params"',
    '§0 "JSON bodies"': '§0 "Bodies"',
    '§3 "Identity rules"': '§3 "Identity rules"',
}


P, A = "\x00PROTO\x00", "\x00ARCH\x00"  # placeholders, rendered per line by render()


def rewrite(text, in_docs, depth):
    """The text with every known outside citation replaced; `depth` is the page's depth under docs/."""
    fixtures = "tests/fixtures/tdx"
    sep = r"(?:\s|///?|#|\*)+"  # a line break inside a comment, with its comment leader

    # Markdown links to the shared files: [API.md §2](../../shared/API.md) -> protocol.md §2
    text = re.sub(r"\[API\.md( §\d)?\]\((?:\.\./)*shared/API\.md\)", lambda m: P + (m.group(1) or ""), text)
    text = re.sub(r"\[DESIGN\.md( §\d)?\]\((?:\.\./)*shared/DESIGN\.md\)", lambda m: A + (m.group(1) or ""), text)
    text = re.sub(r"; specification: `(?:\.\./)*shared/spec/trigger-service\.md`", "", text)
    text = re.sub(r"`?(?:\.\./)*shared/API\.md`?", P, text)
    text = re.sub(r"`?(?:\.\./)*shared/DESIGN\.md`?", A, text)

    # The product specification: its attestation checks are docs/protocol.md §5, its endpoints §2.
    text = re.sub(r'core-api\.md "Checks that clients can' + sep + r'perform"( \d)?',
                  lambda m: f"{P} §5" + (f", check{m.group(1)}" if m.group(1) else ""), text)
    text = re.sub(r"core-api\.md check (\d)", P + r" §5 check \1", text)
    text = re.sub(r'core-api\.md' + sep + r'"Attestation' + sep + r'endpoints"', P + ' §2 "Attestation"', text)
    text = re.sub(r'\(core-api\.md,' + sep + r'API\.md "Other endpoints"\)', f'({P} §2 "Public utility")', text)
    text = re.sub(r'API\.md "Other endpoints"', P + ' §2 "Public utility"', text)
    text = re.sub(r"core-api\.md: (\"an interactive UI|\{base_url\}/core/v1/swagger-ui)",
                  lambda m: f'{P} §2 "Public utility": {m.group(1)}', text)
    text = re.sub(r"report data of core-api\.md", f'report data of {P} §2 "Attestation"', text)
    text = re.sub(r"\(core-api\.md\)", f'({P} §2 "Attestation")', text)
    text = re.sub(r"(?<![\w/-])core-api\.md", P + " §5", text)
    text = re.sub(r"(?<![\w/-])(?:spec/)?trigger-service\.md", P + " §4", text)

    # API.md §N "name" / API.md §N / API.md; "an API.md" reads "a protocol.md".
    def api(m):
        sec, name = m.group(2) or "", m.group(3) or ""
        key = f"{sec}{name}".strip()
        art = "a " if m.group(1) else ""
        return art + P + (" " + RENAMED[key] if key in RENAMED else sec + name)

    text = re.sub(r'(?<![\w./-])(an )?`?API\.md`?( §\d)?( "[^"\n]{1,40}")?',
                  api, text)
    text = re.sub(r"(?<![\w./-])`?DESIGN\.md`?( §\d)?", lambda m: A + (m.group(1) or ""), text)
    # The same place cited twice side by side after the rewrite.
    att = re.escape(P + ' §2 "Attestation"')
    text = re.sub(rf"({att}), {re.escape(P)} §2(?: \"Attestation\")?(?![\w\"])", r"\1", text)
    text = re.sub(rf"{re.escape(P)} §2, ({att})", r"\1", text)

    # The shared TDX samples are tests/fixtures/tdx; their README's sections stay the same.
    text = re.sub(r"README of testdata/tdx", f"{fixtures}/README.md", text)
    text = re.sub(r"the project's test data `testdata/tdx/", f"the project's test fixtures `{fixtures}/", text)
    text = re.sub(r"(?<![\w/])(?:\.\./)*(?:shared/)?testdata/tdx", fixtures, text)
    return render(text, in_docs, depth)


def render(text, in_docs, depth):
    """Placeholders become links in the prose of docs/ pages and repository paths elsewhere."""
    if P not in text and A not in text:
        return text
    up = "../" * depth
    out, fenced = [], False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if in_docs and not fenced:
            line = re.sub(re.escape(P) + r"( §\d(?:[–-]§\d)?)?", lambda m: f"[protocol.md{m.group(1) or ''}]({up}protocol.md)",
                          line)
            line = re.sub(re.escape(A) + r"( §\d)?", lambda m: f"[architecture.md{m.group(1) or ''}]({up}architecture.md)",
                          line)
        out.append(line.replace(P, "docs/protocol.md").replace(A, "docs/architecture.md"))
    return "\n".join(out)


def main(argv):
    fix, only_unmodified, repo, only = options(argv, __file__)
    me = "tests/style/" + os.path.basename(__file__)  # names every pattern it looks for
    busy = modified(repo) if only_unmodified and not only else set()
    fixed, skipped, bad = [], [], []
    for rel in tracked(repo):
        if only and rel not in only:
            continue
        if rel == me or rel.startswith(SKIP_PREFIXES) or os.path.basename(rel) in SKIP_NAMES:
            continue
        if os.path.splitext(rel)[1] not in TEXT_EXTS:
            continue
        path = os.path.join(repo, rel)
        if not os.path.isfile(path) or os.path.islink(path):
            continue
        text = read_text(path)
        if not OUTSIDE.search(text):
            continue
        if fix and rel not in busy and not rel.endswith(".sol"):
            in_docs = rel.startswith("docs/") and rel.endswith(".md")
            new = rewrite(text, in_docs, rel.count("/") - 1 if in_docs else 0)
            if new != text:
                write_text(path, new)
                fixed.append(rel)
                text = new
        elif fix:
            skipped.append(rel)
        for n, line in enumerate(text.split("\n"), 1):
            if OUTSIDE.search(line):
                bad.append(f"{rel}:{n}: {line.strip()[:160]}")
    summary = f"{len(fixed)} rewritten, {len(skipped)} skipped, {len(bad)} lines citing outside the repository"
    return report([("rewritten", fixed), ("skipped", skipped), ("cites outside the repository", bad)], summary, bad)

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
