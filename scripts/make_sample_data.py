#!/usr/bin/env python3
"""Writes the bundled sample crawl: sample-data/sample-crawl.warc.gz, its
README.md and expected.json (the ground truth).

The crawl is invented but shaped like a real one: a warcinfo record, then
request/response pairs for a few hundred HTML pages from 7 sites (each with
its own template), with exact mirrors, near-duplicates of known edit kinds,
syndicated copies, revisit records, non-HTML responses and a few records that
ingest must reject. Every record is its own gzip member (Common Crawl style).

Deterministic: one seeded random generator, fixed dates, record ids derived
from content, gzip with mtime=0, so running it again gives the same bytes
(with the same zlib; the deflate stream may differ across zlib versions).

Python 3 standard library only. Usage: python3 scripts/make_sample_data.py
[output-folder] (default: sample-data next to scripts/).
"""

import base64
import datetime
import gzip
import hashlib
import json
import random
import struct
import sys
import uuid
import zlib
from pathlib import Path

SEED = 20261112
START = datetime.datetime(2026, 3, 2, 6, 0, 0, tzinfo=datetime.timezone.utc)
UUID_NAMESPACE = uuid.UUID("6f1d2c3e-8a4b-4c5d-9e6f-0a1b2c3d4e5f")
FILE_NAME = "sample-crawl.warc.gz"
MAX_BYTES = 5 * 1024 * 1024

# ---------------------------------------------------------------- vocabulary

EN_SUBJECTS = """the city council|local residents|the mayor's office|a group of volunteers|
the regional government|several small businesses|the school board|engineers at the utility|
the new director|most shop owners|the transport authority|a spokesperson for the company|
the research team|two independent experts|the planning committee|neighbours on the east side|
the hospital administration|farmers in the valley|the museum staff|the local football club|
teachers and parents|the harbour authority|the fire department|a coalition of landlords|
the county auditor|younger voters|the library trustees|visitors from abroad|
the housing association|the board of directors""".replace("\n", "").split("|")

EN_VERBS = """approved|rejected|discussed|announced|postponed|questioned|welcomed|criticised|
reviewed|funded|expanded|delayed|defended|presented|completed|opened|proposed|supported|
investigated|celebrated|measured|replaced|repaired|published|cancelled|tested|examined|
doubled|reduced|described|organised|recommended|negotiated|restored|launched|inspected|
predicted|confirmed|challenged|simplified""".replace("\n", "").split("|")

EN_OBJECTS = """the annual budget|a plan to widen the main road|the proposal for a new bridge|
the renovation of the old library|a pilot programme for electric buses|the rules for street parking|
the long-delayed housing project|a survey of water quality|the contract for waste collection|
an agreement with the neighbouring town|the schedule for the summer festival|
the results of the spring inspection|a report on energy prices|the design of the new park|
a temporary closure of the market square|the cost of the flood barriers|
a request for additional funding|the timetable for the evening trains|
the findings of the independent review|a modest increase in local taxes|
the restoration of the town hall|a campaign to plant more trees|the merger of two schools|
plans for a public swimming pool|the collection of historical photographs|
new safety measures at the station|the expansion of the bicycle network|
a study of traffic on weekends|the sale of the former factory site|
the hiring of additional nurses""".replace("\n", "").split("|")

EN_ADVERBIALS = """on Tuesday evening|after a long debate|earlier this month|despite strong objections|
for the third year in a row|at a crowded public meeting|without much discussion|
in a narrow vote|after months of uncertainty|at the request of residents|
before the end of the year|during a short session|in response to recent complaints|
ahead of the autumn elections|with little advance notice|at considerable expense|
following a series of delays|in the face of rising costs|last week|over the weekend""".replace(
    "\n", ""
).split("|")

EN_CONNECTORS = """However|Meanwhile|In addition|As a result|Nevertheless|At the same time|
For now|According to officials|In the meantime|Even so|By contrast|Still""".replace(
    "\n", ""
).split("|")

EN_PEOPLE = """Margaret Ellison|Thomas Reyes|Priya Natarajan|David Okafor|Helen Fairbanks|
Samuel Whitaker|Laura Kowalski|Ahmed Rahman|Claire Dubois|Jonathan Pryce|Irene Castillo|
Michael Brennan|Sofia Lindqvist|George Hammond|Naomi Clarke""".replace("\n", "").split("|")

EN_ROLES = """a member of the council|the project manager|a local historian|the head teacher|
an economist at the university|the chairwoman of the committee|a long-time resident|
the chief engineer|a spokesman for the union|the owner of a bakery nearby""".replace(
    "\n", ""
).split("|")

EN_QUOTES = """We have waited long enough for this|Nobody expected the costs to rise so quickly|
This is a good day for the whole community|The details still need careful work|
I think people deserve a clear answer|It will take time, but we are moving in the right direction|
We simply cannot afford to get this wrong|The numbers speak for themselves|
Our priority is safety, not speed|There is still a great deal of uncertainty""".replace(
    "\n", ""
).split("|")

# Topic words per site, so articles of different sites read differently.
EN_TOPICS = {
    "herald": """elections|councillors|ferry|harbour|pensions|courthouse|police|commuters|
tenants|referendum|shipyard|lighthouse|fishermen|tourism|ambulance""",
    "riverstone": """hiking|trail|campfire|canoe|mountains|sunrise|backpack|weather|river|
photographs|cabin|wildlife|maps|boots|journey""",
    "techpulse": """software|processors|batteries|smartphones|encryption|startups|servers|
networks|algorithms|developers|satellites|sensors|robotics|browsers|updates""",
    "greenleaf": """tomatoes|compost|seedlings|orchard|pruning|greenhouse|roses|soil|
fertiliser|beetles|irrigation|lavender|harvest|mulch|perennials""",
    "wire": """markets|investors|exports|inflation|currencies|shipping|airlines|tariffs|
manufacturers|retailers|commodities|bonds|forecasts|consumers|wages""",
}

EN_TOPIC_FRAMES = """the debate about {t}|new figures on {t}|the future of {t}|
a shortage of {t}|rising interest in {t}|complaints about {t}|the price of {t}|
a report on local {t}|the latest trends in {t}|questions about {t}""".replace(
    "\n", ""
).split("|")

RU_SUBJECTS = """местные жители|городские власти|депутаты районного совета|сотрудники музея|
представители администрации|учителя и родители|строители|владельцы магазинов|
волонтёры|специалисты энергокомпании|члены комиссии|студенты университета|
жители соседних домов|организаторы фестиваля|сотрудники библиотеки|врачи городской больницы|
фермеры из пригорода|руководители предприятия|эксперты|активисты""".replace(
    "\n", ""
).split("|")

RU_VERBS = """обсудили|одобрили|отклонили|представили|подготовили|объявили|перенесли|
завершили|открыли|поддержали|раскритиковали|проверили|отремонтировали|предложили|
утвердили|изучили|получили|опубликовали|начали|отметили""".replace("\n", "").split("|")

RU_OBJECTS = """новый проект реконструкции парка|план ремонта центральной улицы|
бюджет на следующий год|программу развития общественного транспорта|
результаты весенней проверки|проект строительства нового моста|
расписание пригородных автобусов|условия аренды городских помещений|
предложение о создании пешеходной зоны|отчёт о качестве питьевой воды|
план благоустройства набережной|идею открытия детской библиотеки|
решение о закрытии старого рынка|программу летнего фестиваля|
смету на ремонт школы|проект новой поликлиники|правила парковки в центре города|
итоги отопительного сезона""".replace("\n", "").split("|")

RU_ADVERBIALS = """на прошлой неделе|после долгого обсуждения|в понедельник|
на открытом заседании|несмотря на возражения|в конце месяца|впервые за много лет|
по просьбе жителей|до начала зимы|на общем собрании|в минувшие выходные|
без лишних споров""".replace("\n", "").split("|")

RU_CONNECTORS = """Однако|Кроме того|Тем временем|В результате|При этом|Впрочем|
По словам организаторов|Как отмечают специалисты|Тем не менее|Пока""".replace(
    "\n", ""
).split("|")

RU_AFFECTED = """жителях района|бюджете города|ценах на проезд|работе транспорта|летнем сезоне|
школах и детских садах|малом бизнесе""".replace("\n", "").split("|")

RU_PEOPLE = """Ирина Соколова|Андрей Петров|Наталья Кузнецова|Сергей Морозов|Ольга Васильева|
Дмитрий Волков|Елена Павлова|Михаил Фёдоров""".replace("\n", "").split("|")

RU_QUOTES = """Мы давно ждали этого решения|Работы предстоит ещё очень много|
Жители должны знать, куда уходят деньги|Это важный шаг для всего города|
Сроки пока не определены|Главное сейчас — безопасность людей""".replace(
    "\n", ""
).split("|")

RU_TOPICS = {
    "novosti": """транспорта|отопления|дорог|школ|поликлиник|парков|выборов|налогов|
спорта|туризма""",
    "gazeta": """истории|театра|архивов|краеведения|музеев|искусства|литературы|
памятников|традиций|ремёсел""",
}

RU_TOPIC_FRAMES = """вопросы развития {t}|новые данные о состоянии {t}|будущее {t}|
проблемы {t}|планы по поддержке {t}""".replace("\n", "").split("|")

# ---------------------------------------------------------------- sites

SITES = {
    "herald": {
        "host": "www.northbay-herald.com",
        "lang": "en",
        "charset": "utf-8",
        "name": "The Northbay Herald",
        "tagline": "Independent news for the Northbay region since 1887",
        "nav": ["Home", "Local", "Politics", "Business", "Sport", "Opinion", "Weather"],
        "path": "/news/2026/{n:03d}/{slug}.html",
    },
    "riverstone": {
        "host": "blog.riverstone-notes.net",
        "lang": "en",
        "charset": "utf-8",
        "name": "Riverstone Notes",
        "tagline": "Walking, paddling and writing in the hills",
        "nav": ["Blog", "Trips", "Gear", "About me", "Contact"],
        "path": "/posts/{slug}-{n}/",
    },
    "techpulse": {
        "host": "www.techpulse-daily.io",
        "lang": "en",
        "charset": "utf-8",
        "name": "TechPulse Daily",
        "tagline": "Technology news, reviews and analysis",
        "nav": ["Latest", "Reviews", "Security", "Mobile", "Science", "Podcasts"],
        "path": "/articles/{n}-{slug}",
    },
    "greenleaf": {
        "host": "greenleaf-garden.org",
        "lang": "en",
        "charset": "utf-8",
        "name": "Greenleaf Garden Society",
        "tagline": "Practical advice for gardeners of every level",
        "nav": ["Advice", "Plants", "Events", "Membership", "Shop"],
        "path": "/advice/{slug}.php?id={n}",
    },
    "wire": {
        "host": "newswire-syndicate.com",
        "lang": "en",
        "charset": "utf-8",
        "name": "Newswire Syndicate",
        "tagline": "Stories from our partner newsrooms",
        "nav": ["Top stories", "World", "Markets", "Partners"],
        "path": "/story/{n:05d}/{slug}",
    },
    "novosti": {
        "host": "novosti-goroda.ru",
        "lang": "ru",
        "charset": "utf-8",
        "name": "Новости города",
        "tagline": "Главные события нашего города каждый день",
        "nav": ["Главная", "Город", "Общество", "Экономика", "Спорт", "Культура"],
        "path": "/news/{n}/",
    },
    "gazeta": {
        "host": "www.staraya-gazeta.ru",
        "lang": "ru",
        "charset": "windows-1251",
        "name": "Старая газета",
        "tagline": "Краеведческое издание, основано в 1994 году",
        "nav": ["Главная", "Статьи", "Архив", "Авторы", "Редакция"],
        "path": "/articles/{n}.html",
    },
}
MIRROR_HOST = "mirror.northbay-archive.net"

ORIGINALS_PER_SITE = {
    "herald": 45,
    "riverstone": 34,
    "techpulse": 40,
    "greenleaf": 35,
    "wire": 6,
    "novosti": 36,
    "gazeta": 24,
}

# ---------------------------------------------------------------- text


class Writer:
    """Generates articles (title + paragraphs of sentences) for one language."""

    def __init__(self, rng, lang, topic):
        self.rng = rng
        self.lang = lang
        if lang == "en":
            self.topics = [t.strip() for t in EN_TOPICS[topic].replace("\n", "").split("|")]
        else:
            self.topics = [t.strip() for t in RU_TOPICS[topic].replace("\n", "").split("|")]

    def topic_phrase(self):
        frames = EN_TOPIC_FRAMES if self.lang == "en" else RU_TOPIC_FRAMES
        return self.rng.choice(frames).format(t=self.rng.choice(self.topics))

    def sentence(self):
        r = self.rng
        if self.lang == "ru":
            return self._sentence_ru()
        subj, verb, adv = r.choice(EN_SUBJECTS), r.choice(EN_VERBS), r.choice(EN_ADVERBIALS)
        obj = r.choice(EN_OBJECTS) if r.random() < 0.6 else self.topic_phrase()
        kind = r.randrange(10)
        if kind == 0:
            s = f"{r.choice(EN_CONNECTORS)}, {subj} {verb} {obj}."
        elif kind == 1:
            return f"\u201c{r.choice(EN_QUOTES)},\u201d said {r.choice(EN_PEOPLE)}, {r.choice(EN_ROLES)}."
        elif kind == 2:
            s = f"{subj} {verb} {obj} {adv}, and {r.choice(EN_SUBJECTS)} {r.choice(EN_VERBS)} {self.topic_phrase()}."
        elif kind == 3:
            n = r.choice([12, 40, 75, 150, 320, 1200, 4500])
            s = f"{subj} {verb} {obj} {adv}, a decision affecting about {n} households."
        elif kind == 4:
            s = f"What does {self.topic_phrase()} mean for {r.choice(EN_SUBJECTS)}?"
        elif kind == 5:
            s = f"{subj} {verb} {obj}."
        elif kind == 6:
            s = f"{adv[0].upper() + adv[1:]}, {subj} {verb} {obj}, although {r.choice(EN_SUBJECTS)} {r.choice(EN_VERBS)} {self.topic_phrase()}."
        else:
            s = f"{subj} {verb} {obj} {adv}."
        return s[0].upper() + s[1:]

    def _sentence_ru(self):
        r = self.rng
        subj, verb, adv = r.choice(RU_SUBJECTS), r.choice(RU_VERBS), r.choice(RU_ADVERBIALS)
        obj = r.choice(RU_OBJECTS)
        kind = r.randrange(8)
        if kind == 0:
            s = f"{r.choice(RU_CONNECTORS)}, {subj} {verb} {obj}."
        elif kind == 1:
            return f"\u00ab{r.choice(RU_QUOTES)}\u00bb, \u2014 говорит {r.choice(RU_PEOPLE)}."
        elif kind == 2:
            s = f"{adv} {subj} {verb} {obj}, а {r.choice(RU_SUBJECTS)} {r.choice(RU_VERBS)} {r.choice(RU_OBJECTS)}."
        elif kind == 3:
            s = f"Среди главных тем встречи были {self.topic_phrase()} и {self.topic_phrase()}."
        elif kind == 4:
            n = r.choice([15, 120, 300, 2500, 18000])
            s = f"{subj} {verb} {obj} {adv}, это решение коснётся примерно {n} человек."
        elif kind == 5:
            s = f"Как это отразится на {r.choice(RU_AFFECTED)}, пока неясно."
        else:
            s = f"{subj} {verb} {obj} {adv}."
        return s[0].upper() + s[1:]

    def title(self):
        r = self.rng
        if self.lang == "en":
            t = f"{r.choice(EN_SUBJECTS)} {r.choice(EN_VERBS)} {self.topic_phrase()}"
        else:
            t = f"{r.choice(RU_SUBJECTS)} {r.choice(RU_VERBS)} {r.choice(RU_OBJECTS)}"
        return t[0].upper() + t[1:]

    def article(self, brief=False):
        r = self.rng
        if brief:
            paragraphs = [[self.sentence() for _ in range(r.randint(1, 2))]]
        else:
            paragraphs = [[self.sentence() for _ in range(r.randint(2, 6))] for _ in range(r.randint(3, 8))]
        return {"title": self.title(), "paragraphs": paragraphs}


def slugify(title, n):
    ascii_part = "".join(c if c.isascii() and c.isalnum() else "-" for c in title.lower())
    words = [w for w in ascii_part.split("-") if w][:6]
    return "-".join(words) or f"item{n}"


def article_text(article):
    """The article's plain text, lowercased: what a similarity hint is computed on."""
    parts = [article["title"]] + [s for p in article["paragraphs"] for s in p]
    return " ".join(parts).lower()


def lcs_similarity(a, b):
    """2·LCS/(|a|+|b|) over characters (bit-parallel on Python ints)."""
    if not a and not b:
        return 1.0
    if len(a) > len(b):
        a, b = b, a
    masks = {}
    for i, c in enumerate(a):
        masks[c] = masks.get(c, 0) | (1 << i)
    full = (1 << len(a)) - 1
    v = full
    for c in b:
        m = masks.get(c, 0)
        if m:
            v = ((v + (v & m)) | (v & ~m)) & full
    lcs = len(a) - bin(v).count("1")
    return 2 * lcs / (len(a) + len(b))


# ---------------------------------------------------------------- edits


def edit_article(rng, writer, article, kind):
    """A copy of `article` with a light edit of the given kind."""
    paragraphs = [list(p) for p in article["paragraphs"]]
    if kind in ("words_changed", "mixed"):
        for _ in range(rng.randint(3, 5)):
            pi = rng.randrange(len(paragraphs))
            si = rng.randrange(len(paragraphs[pi]))
            words = paragraphs[pi][si].split(" ")
            wi = rng.randrange(len(words))
            pool = EN_VERBS if writer.lang == "en" else RU_VERBS
            words[wi] = rng.choice(pool) + ("." if words[wi].endswith(".") else "")
            paragraphs[pi][si] = " ".join(words)
    if kind in ("sentence_added", "mixed"):
        pi = rng.randrange(len(paragraphs))
        paragraphs[pi].insert(rng.randrange(len(paragraphs[pi]) + 1), writer.sentence())
    if kind == "sentence_removed":
        candidates = [i for i, p in enumerate(paragraphs) if len(p) >= 2]
        pi = rng.choice(candidates)
        del paragraphs[pi][rng.randrange(len(paragraphs[pi]))]
    return {"title": article["title"], "paragraphs": paragraphs}


# ---------------------------------------------------------------- html


def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


ADS_EN = [
    "Subscribe today and get three months of unlimited reading for free.",
    "Advertisement: Summer sale at Harbour Furniture, up to forty percent off.",
    "Sponsored: Compare energy tariffs in two minutes.",
    "Advertisement: Book your autumn cruise now and save.",
]
ADS_RU = [
    "Реклама: скидки на окна до конца месяца.",
    "Подпишитесь на нашу рассылку и получайте новости первыми.",
    "Реклама: ремонт квартир под ключ недорого.",
]


def render(site_key, article, sidebar_titles, variant=0, attribution=None):
    """The HTML of one page: the site's template around the article.
    `variant` changes the ad and the sidebar (template-level edits)."""
    site = SITES[site_key]
    ru = site["lang"] == "ru"
    ads = ADS_RU if ru else ADS_EN
    ad = ads[variant % len(ads)]
    nav = "".join(
        f'<li><a href="/{n.lower().replace(" ", "-") if n.isascii() else f"section-{i}"}/">{esc(n)}</a></li>'
        for i, n in enumerate(site["nav"])
    )
    body = "\n".join("<p>" + esc(" ".join(p)) + "</p>" for p in article["paragraphs"])
    side_label = "Читайте также" if ru else "Most read"
    side = "".join(f"<li><a href=\"#\">{esc(t)}</a></li>" for t in sidebar_titles)
    attribution_html = f'<p class="source">{esc(attribution)}</p>' if attribution else ""
    charset_meta = f'<meta charset="{site["charset"]}">'
    year = "2026"
    if site_key == "herald":
        return f"""<!DOCTYPE html>
<html lang="en"><head>{charset_meta}<title>{esc(article["title"])} | {esc(site["name"])}</title>
<link rel="stylesheet" href="/static/herald.css"><script>window.dataLayer=[];function track(e){{dataLayer.push(e)}}</script></head>
<body><header class="masthead"><h2>{esc(site["name"])}</h2><p class="tagline">{esc(site["tagline"])}</p></header>
<nav><ul>{nav}</ul></nav>
<main><article><h1>{esc(article["title"])}</h1><p class="byline">By the Herald staff</p>
{body}
{attribution_html}</article>
<aside class="ad">{esc(ad)}</aside></main>
<aside class="sidebar"><h3>{side_label}</h3><ol>{side}</ol></aside>
<footer><p>&copy; {year} Northbay Herald Publishing Ltd. 14 Quay Street, Northbay.</p><p><a href="/privacy">Privacy</a> &middot; <a href="/terms">Terms</a></p></footer>
</body></html>
"""
    if site_key == "riverstone":
        return f"""<!doctype html>
<html><head>{charset_meta}<title>{esc(article["title"])} - {esc(site["name"])}</title>
<style>body{{font-family:Georgia,serif;max-width:40em;margin:auto}}</style></head>
<body><div id="top"><a href="/" class="brand">{esc(site["name"])}</a> <em>{esc(site["tagline"])}</em></div>
<div class="menu">{nav.replace("<li>", "<span>").replace("</li>", "</span> ")}</div>
<div class="post"><h1 class="entry-title">{esc(article["title"])}</h1>
<div class="entry-content">
{body}
{attribution_html}
</div>
<div class="comments"><h4>Comments</h4><p>No comments yet. Be the first to share your thoughts.</p></div></div>
<div class="widget"><h4>Recent posts</h4><ul>{side}</ul><p>{esc(ad)}</p></div>
<div id="footer">Powered by a small static site generator. Photos and words by the author.</div>
<noscript>Please enable JavaScript for comments.</noscript>
</body></html>
"""
    if site_key == "techpulse":
        return f"""<!DOCTYPE html>
<html lang="en-US"><head>{charset_meta}<meta name="viewport" content="width=device-width"><title>{esc(article["title"])}</title>
<script async src="/js/analytics.js"></script><script>var ads = {{slot: "top", size: [728, 90]}};</script></head>
<body class="article-page"><div class="topbar"><span class="logo">{esc(site["name"])}</span><form><input type="search" placeholder="Search"></form></div>
<ul class="sections">{nav}</ul>
<div class="ad-banner">{esc(ad)}</div>
<div class="content"><h1>{esc(article["title"])}</h1><div class="meta">TechPulse Staff &middot; 6 min read</div>
<section class="article-body">
{body}
{attribution_html}
</section></div>
<div class="related"><h3>Trending now</h3><ul>{side}</ul></div>
<footer class="site-footer"><p>{esc(site["name"])} &copy; {year}. All rights reserved.</p><p>Newsletter &middot; Careers &middot; Advertise with us</p></footer>
</body></html>
"""
    if site_key == "greenleaf":
        return f"""<html>
<head>{charset_meta}<title>{esc(site["name"])}: {esc(article["title"])}</title></head>
<body bgcolor="#f4f8ef"><table width="100%"><tr><td colspan="2"><h2>{esc(site["name"])}</h2><i>{esc(site["tagline"])}</i></td></tr>
<tr><td width="20%" valign="top"><ul>{nav}</ul><p><b>Events this month</b></p><ul>{side}</ul></td>
<td valign="top"><h1>{esc(article["title"])}</h1>
{body}
{attribution_html}
<p><small>{esc(ad)}</small></p></td></tr>
<tr><td colspan="2"><hr><small>Registered charity no. 1048213. Greenleaf Garden Society, The Old Nursery, Elm Lane.</small></td></tr></table>
</body></html>
"""
    if site_key == "wire":
        return f"""<!DOCTYPE html>
<html lang="en"><head>{charset_meta}<title>{esc(article["title"])} &mdash; {esc(site["name"])}</title></head>
<body><header><div class="logo">{esc(site["name"])}</div><div>{esc(site["tagline"])}</div><nav><ul>{nav}</ul></nav></header>
<div class="story"><h1>{esc(article["title"])}</h1>
{attribution_html}
{body}
<div class="promo">{esc(ad)}</div></div>
<div class="rail"><h3>More from our partners</h3><ul>{side}</ul></div>
<footer>Content is republished under licence from partner newsrooms. Contact: desk@newswire-syndicate.com</footer>
</body></html>
"""
    if site_key == "novosti":
        return f"""<!DOCTYPE html>
<html lang="ru"><head>{charset_meta}<title>{esc(article["title"])} — {esc(site["name"])}</title>
<script>var counter = new Image(); counter.src = "/count?" + Math.random();</script></head>
<body><div class="header"><a href="/">{esc(site["name"])}</a><div class="slogan">{esc(site["tagline"])}</div></div>
<ul class="menu">{nav}</ul>
<div class="news"><h1>{esc(article["title"])}</h1><div class="date">2 марта 2026</div>
{body}
{attribution_html}</div>
<div class="banner">{esc(ad)}</div>
<div class="side"><h3>{side_label}</h3><ul>{side}</ul></div>
<div class="footer">© {year} «{esc(site["name"])}». При перепечатке ссылка обязательна.</div>
</body></html>
"""
    if site_key == "gazeta":
        return f"""<html><head>
<meta http-equiv="X-UA-Compatible" content="IE=edge">{charset_meta}
<title>{esc(article["title"])}</title></head>
<body><table><tr><td><h2>{esc(site["name"])}</h2><p>{esc(site["tagline"])}</p></td></tr>
<tr><td><ul>{nav}</ul></td></tr>
<tr><td><h1>{esc(article["title"])}</h1>
{body}
{attribution_html}
<p><i>{esc(ad)}</i></p></td></tr>
<tr><td><h3>{side_label}</h3><ul>{side}</ul></td></tr>
<tr><td><small>Редакция газеты. Все права защищены. Адрес: ул. Садовая, 7.</small></td></tr></table>
</body></html>
"""
    raise ValueError(site_key)


def empty_page_html():
    return """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title></title>
<script>document.location.replace("/app/#/home");</script><style>body{margin:0}</style></head>
<body><div id="app"></div><noscript></noscript></body></html>
"""


def png_bytes(rng, width, height):
    """A valid RGB PNG of random colours."""

    def chunk(tag, data):
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    raw = b"".join(b"\x00" + bytes(rng.randrange(256) for _ in range(width * 3)) for _ in range(height))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def pdf_bytes(text):
    """A minimal valid one-page PDF showing `text` (ASCII)."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = b"%PDF-1.4\n"
    offsets = []
    for i, obj in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n".encode() + obj + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return out


# ---------------------------------------------------------------- warc


def sha1_b32(data):
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode()


def http_date(t):
    return t.strftime("%a, %d %b %Y %H:%M:%S GMT")


def warc_date(t):
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def chunked(body, rng):
    out = b""
    i = 0
    while i < len(body):
        n = rng.randint(200, 1500)
        piece = body[i : i + n]
        out += f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
        i += n
    return out + b"0\r\n\r\n"


class WarcWriter:
    def __init__(self):
        self.members = []
        self.counter = 0
        self.types = {}
        self.warcinfo_id = None

    def record_id(self, kind, uri):
        self.counter += 1
        return f"<urn:uuid:{uuid.uuid5(UUID_NAMESPACE, f'{self.counter}|{kind}|{uri}')}>"

    def write(self, kind, uri, date, content_type, block, extra=()):
        rid = self.record_id(kind, uri)
        headers = [("WARC-Type", kind), ("WARC-Record-ID", rid), ("WARC-Date", warc_date(date))]
        if uri:
            headers.append(("WARC-Target-URI", uri))
        if self.warcinfo_id and kind != "warcinfo":
            headers.append(("WARC-Warcinfo-ID", self.warcinfo_id))
        headers.extend(extra)
        headers.append(("WARC-Block-Digest", sha1_b32(block)))
        headers.append(("Content-Type", content_type))
        headers.append(("Content-Length", str(len(block))))
        head = "WARC/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers) + "\r\n"
        self.members.append(gzip.compress(head.encode() + block + b"\r\n\r\n", compresslevel=9, mtime=0))
        self.types[kind] = self.types.get(kind, 0) + 1
        return rid

    def bytes(self):
        return b"".join(self.members)


# ---------------------------------------------------------------- crawl plan


def main():
    out_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "sample-data"
    rng = random.Random(SEED)
    writers = {key: Writer(rng, SITES[key]["lang"], key) for key in SITES}
    counters = {key: 0 for key in SITES}
    pages = []  # every fetch: dict(url, site, article_id, html (str), role, kind, ...)
    articles = {}  # article_id -> article

    def new_url(site_key, title, host=None):
        counters[site_key] += 1
        n = counters[site_key] + 100
        path = SITES[site_key]["path"].format(n=n, slug=slugify(title, n))
        return f"https://{host or SITES[site_key]['host']}{path}"

    def sidebar(site_key):
        pool = [a["title"] for a in articles.values() if a["site"] == site_key]
        return rng.sample(pool, min(4, len(pool))) if pool else []

    # Originals.
    for site_key, count in ORIGINALS_PER_SITE.items():
        for i in range(count):
            brief = site_key == "herald" and i < 5
            art = writers[site_key].article(brief=brief)
            art["site"] = site_key
            aid = f"{site_key}-{i:03d}"
            articles[aid] = art
    for aid, art in articles.items():
        site_key = art["site"]
        page = {
            "url": new_url(site_key, art["title"]),
            "site": site_key,
            "article_id": aid,
            "article": art,
            "role": "original",
            "kind": None,
            "html": render(site_key, art, sidebar(site_key), variant=rng.randrange(4)),
        }
        pages.append(page)
    originals = list(pages)

    def long_originals(lang=None, sites=None):
        return [
            p
            for p in originals
            if sum(len(x) for x in p["article"]["paragraphs"]) >= 8
            and (lang is None or SITES[p["site"]]["lang"] == lang)
            and (sites is None or p["site"] in sites)
        ]

    derived = []
    # Exact mirrors: the same HTTP payload under another URL.
    for src in rng.sample(long_originals(sites={"herald"}), 8):
        url = src["url"].replace(SITES["herald"]["host"], MIRROR_HOST)
        derived.append(dict(src, url=url, role="mirror", kind="exact", source=src["url"]))
    for src in rng.sample(long_originals(sites={"techpulse", "greenleaf", "riverstone", "novosti"}), 12):
        url = src["url"] + ("&" if "?" in src["url"] else "?") + "utm_source=newsletter&utm_medium=email"
        derived.append(dict(src, url=url, role="mirror", kind="exact", source=src["url"]))

    # Near-duplicates: same site, same article with a light edit.
    kinds = ["words_changed", "sentence_added", "sentence_removed", "template_changed", "mixed"]
    nd_sources = rng.sample(long_originals(), 35)
    for i, src in enumerate(nd_sources):
        kind = kinds[i % len(kinds)]
        art = src["article"] if kind == "template_changed" else edit_article(rng, writers[src["site"]], src["article"], kind)
        variant = rng.randrange(4) + (1 if kind in ("template_changed", "mixed") else 0)
        html = render(src["site"], art, sidebar(src["site"]), variant=variant)
        url = new_url(src["site"], art["title"])
        derived.append(dict(src, url=url, article=art, html=html, role="near_duplicate", kind=kind, source=src["url"]))

    # Syndicated copies: English articles republished by the wire, Russian
    # articles of the UTF-8 site republished by the windows-1251 site.
    en_sources = rng.sample(long_originals(sites={"herald", "techpulse", "greenleaf", "riverstone"}), 14)
    ru_sources = rng.sample(long_originals(sites={"novosti"}), 6)
    for src in en_sources + ru_sources:
        target = "wire" if src["site"] != "novosti" else "gazeta"
        source_name = SITES[src["site"]]["name"]
        note = (
            f"This story was originally published by {source_name}."
            if target == "wire"
            else f"Материал впервые опубликован изданием «{source_name}»."
        )
        html = render(target, src["article"], sidebar(target), variant=rng.randrange(4), attribution=note)
        url = new_url(target, src["article"]["title"])
        kind = "syndicated" if target == "wire" else "syndicated_recoded"
        derived.append(dict(src, url=url, site=target, html=html, role="syndicated", kind=kind, source=src["url"]))

    pages.extend(derived)

    # Rejects: an empty page and a page with a broken HTTP header.
    empty = {"url": "https://www.techpulse-daily.io/app/", "site": "techpulse", "role": "reject", "kind": "empty_text"}
    broken_art = writers["herald"].article()
    broken = {
        "url": new_url("herald", broken_art["title"]),
        "site": "herald",
        "role": "reject",
        "kind": "bad_http",
        "html": render("herald", broken_art, [], variant=0),
    }
    empty["html"] = empty_page_html()
    pages.extend([empty, broken])

    # Transfer variants: one original served chunked, one mirror served gzip.
    chunked_page = next(p for p in originals if p["site"] == "riverstone" and p["article_id"].endswith("007"))
    chunked_page["transfer"] = "chunked"
    gzip_page = next(p for p in derived if p["role"] == "mirror" and "utm_source" in p["url"])
    gzip_page["transfer"] = "gzip"

    # Non-HTML responses.
    binaries = [
        ("https://www.northbay-herald.com/images/harbour-1.png", "image/png", png_bytes(rng, 24, 16)),
        ("https://greenleaf-garden.org/img/roses.png", "image/png", png_bytes(rng, 32, 32)),
        ("https://www.techpulse-daily.io/static/logo.png", "image/png", png_bytes(rng, 48, 12)),
        ("https://greenleaf-garden.org/files/planting-calendar.pdf", "application/pdf", pdf_bytes("Planting calendar 2026")),
        ("https://www.northbay-herald.com/docs/council-minutes.pdf", "application/pdf", pdf_bytes("Council minutes, March")),
    ]

    # Fetch order: shuffled, then revisits of some originals at the end
    # (a second pass of the crawler finding unchanged pages).
    fetches = [("html", p) for p in pages] + [("binary", b) for b in binaries]
    rng.shuffle(fetches)
    revisit_sources = rng.sample([p for p in originals if "transfer" not in p], 12)

    warc = WarcWriter()
    t = START
    info = (
        "software: neardup scripts/make_sample_data.py\r\n"
        "format: WARC File Format 1.1\r\n"
        "conformsTo: https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n"
        "isPartOf: neardup-sample-crawl\r\n"
        "description: Invented sample crawl for tests: 7 sites, mirrors, near-duplicates, syndication, revisits.\r\n"
        "robots: classic\r\n"
        "operator: neardup test suite\r\n"
    ).encode()
    warc.warcinfo_id = warc.write("warcinfo", None, t, "application/warc-fields", info, extra=[("WARC-Filename", FILE_NAME)])

    response_ids = {}
    documents = []
    rejects = []
    html_responses = 0
    ip_of = {}

    def ip(uri):
        host = uri.split("/")[2]
        if host not in ip_of:
            ip_of[host] = f"203.0.113.{10 + len(ip_of)}"
        return ip_of[host]

    def request(uri, date, accept="text/html,application/xhtml+xml"):
        host = uri.split("/")[2]
        path = "/" + uri.split("/", 3)[3]
        block = (
            f"GET {path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: neardup-sample-bot/1.0\r\n"
            f"Accept: {accept}\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n"
        ).encode()
        return warc.write("request", uri, date, "application/http; msgtype=request", block, extra=[("WARC-IP-Address", ip(uri))])

    def response(uri, date, head_lines, entity, wire_body, req_id):
        block = ("\r\n".join(head_lines) + "\r\n\r\n").encode() + wire_body
        extra = [
            ("WARC-IP-Address", ip(uri)),
            ("WARC-Concurrent-To", req_id),
            ("WARC-Payload-Digest", sha1_b32(entity)),
            ("WARC-Identified-Payload-Type", head_lines[1].split(": ", 1)[1].split(";")[0] if len(head_lines) > 1 else "text/html"),
        ]
        return warc.write("response", uri, date, "application/http; msgtype=response", block, extra=extra)

    for kind, item in fetches:
        t += datetime.timedelta(seconds=rng.randint(2, 40))
        if kind == "binary":
            uri, ctype, data = item
            req = request(uri, t, accept="*/*")
            head = ["HTTP/1.1 200 OK", f"Content-Type: {ctype}", f"Content-Length: {len(data)}", f"Date: {http_date(t)}", "Server: nginx"]
            response(uri, t, head, data, data, req)
            rejects.append({"url": uri, "reason": "not_html", "content_type": ctype})
            continue
        page = item
        uri = page["url"]
        charset = SITES[page["site"]]["charset"]
        entity = page["html"].encode(charset)
        req = request(uri, t)
        ctype = "text/html" if charset == "windows-1251" else "text/html; charset=utf-8"
        if page["role"] == "reject" and page["kind"] == "bad_http":
            # Status line without a status code, a header line without a
            # colon, and a header name with a space: unparseable as HTTP.
            head = ["HTTP/1.1 OK", "Content-Type: text/html; charset=utf-8", "X-Cache-Status HIT from edge", "Bad Header: yes"]
            response(uri, t, head, entity, entity, req)
            rejects.append({"url": uri, "reason": "bad_http"})
            html_responses += 1
            continue
        transfer = page.get("transfer")
        if transfer == "gzip":
            wire_entity = gzip.compress(entity, mtime=0)
            head = ["HTTP/1.1 200 OK", f"Content-Type: {ctype}", "Content-Encoding: gzip", f"Content-Length: {len(wire_entity)}"]
            body = wire_entity
            entity_for_digest = wire_entity
        elif transfer == "chunked":
            head = ["HTTP/1.1 200 OK", f"Content-Type: {ctype}", "Transfer-Encoding: chunked"]
            body = chunked(entity, rng)
            entity_for_digest = entity
        else:
            head = ["HTTP/1.1 200 OK", f"Content-Type: {ctype}", f"Content-Length: {len(entity)}"]
            body = entity
            entity_for_digest = entity
        head += [f"Date: {http_date(t)}", "Server: Apache/2.4" if page["site"] in ("greenleaf", "gazeta") else "Server: nginx", "Cache-Control: max-age=300"]
        rid = response(uri, t, head, entity_for_digest, body, req)
        html_responses += 1
        response_ids[uri] = (rid, t, sha1_b32(entity_for_digest), ctype)
        if page["role"] == "reject":
            rejects.append({"url": uri, "reason": page["kind"]})
            continue
        documents.append(
            {
                "url": uri,
                "record_id": rid,
                "site": page["site"],
                "language": SITES[page["site"]]["lang"],
                "charset": charset,
                "article_id": page["article_id"],
                "role": page["role"],
                "kind": page["kind"],
                "source": page.get("source"),
                "transfer": transfer,
                "sentences": sum(len(p) for p in page["article"]["paragraphs"]),
            }
        )

    revisits = []
    for src in revisit_sources:
        t += datetime.timedelta(seconds=rng.randint(2, 40))
        uri = src["url"]
        rid, first_date, digest, ctype = response_ids[uri]
        req = request(uri, t)
        block = (
            f"HTTP/1.1 200 OK\r\nContent-Type: {ctype}\r\nContent-Length: {len(src['html'].encode(SITES[src['site']]['charset']))}\r\n"
            f"Date: {http_date(t)}\r\nServer: nginx\r\n\r\n"
        ).encode()
        extra = [
            ("WARC-IP-Address", ip(uri)),
            ("WARC-Concurrent-To", req),
            ("WARC-Profile", "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"),
            ("WARC-Refers-To", rid),
            ("WARC-Refers-To-Target-URI", uri),
            ("WARC-Refers-To-Date", warc_date(first_date)),
            ("WARC-Payload-Digest", digest),
        ]
        revisit_id = warc.write("revisit", uri, t, "application/http; msgtype=response", block, extra=extra)
        revisits.append({"url": uri, "record_id": revisit_id, "refers_to": rid})

    data = warc.bytes()
    assert len(data) < MAX_BYTES, f"sample crawl is {len(data)} bytes"

    # Ground truth pairs: every two documents of one article are duplicates;
    # exact when their decoded HTML is identical.
    by_article = {}
    for d in documents:
        by_article.setdefault(d["article_id"], []).append(d)
    page_of = {p["url"]: p for p in pages}
    pairs = []
    clusters = []
    for aid in sorted(by_article):
        group = sorted(by_article[aid], key=lambda d: d["url"])
        if len(group) > 1:
            clusters.append({"article_id": aid, "urls": [d["url"] for d in group]})
        for i in range(len(group)):
            for j in range(i + 1, len(group)):
                a, b = group[i], group[j]
                pa, pb = page_of[a["url"]], page_of[b["url"]]
                if pa["html"] == pb["html"]:
                    relation, kind = "exact", "mirror"
                else:
                    relation = "near_duplicate"
                    kinds_ab = sorted(k for k in (a["kind"], b["kind"]) if k not in (None, "exact"))
                    kind = "+".join(kinds_ab)
                pairs.append(
                    {
                        "url_a": a["url"],
                        "url_b": b["url"],
                        "relation": relation,
                        "kind": kind,
                        "article_text_similarity": round(lcs_similarity(article_text(pa["article"]), article_text(pb["article"])), 6),
                    }
                )
    # Unrelated pairs: different articles, half of them on the same site
    # (sharing the template, the hard case).
    singles = [d for d in documents if d["role"] == "original"]
    unrelated = []
    seen = set()
    while len(unrelated) < 40:
        a = rng.choice(singles)
        same_site = len(unrelated) % 2 == 0
        pool = [d for d in singles if d["article_id"] != a["article_id"] and (d["site"] == a["site"]) == same_site]
        b = rng.choice(pool)
        key = tuple(sorted((a["url"], b["url"])))
        if key in seen:
            continue
        seen.add(key)
        pa, pb = page_of[key[0]], page_of[key[1]]
        unrelated.append(
            {
                "url_a": key[0],
                "url_b": key[1],
                "relation": "unrelated",
                "kind": "same_site" if same_site else "cross_site",
                "article_text_similarity": round(lcs_similarity(article_text(pa["article"]), article_text(pb["article"])), 6),
            }
        )
    pairs.extend(unrelated)

    def count(values):
        out = {}
        for v in values:
            out[v] = out.get(v, 0) + 1
        return dict(sorted(out.items()))

    counts = {
        "bytes": len(data),
        "records": dict(sorted(warc.types.items())),
        "records_total": sum(warc.types.values()),
        "html_responses": html_responses,
        "non_html_responses": len(binaries),
        "documents": len(documents),
        "documents_by_role": count(d["role"] for d in documents),
        "documents_by_language": count(d["language"] for d in documents),
        "documents_by_site": count(d["site"] for d in documents),
        "rejects": count(r["reason"] for r in rejects),
        "revisits": len(revisits),
        "pairs": count(p["relation"] for p in pairs),
        "pairs_by_kind": count(f"{p['relation']}:{p['kind']}" for p in pairs),
        "duplicate_clusters": len(clusters),
    }
    expected = {
        "file": FILE_NAME,
        "generator": "scripts/make_sample_data.py",
        "seed": SEED,
        "notes": [
            "documents: HTML responses that ingest should keep; rejects: responses it should reject (reason names are suggestions: not_html, empty_text, bad_http).",
            "pairs: every two documents of one article (exact = identical decoded HTML, else near_duplicate with the edit kind of the derived page(s)), plus 40 unrelated pairs.",
            "article_text_similarity: 2*LCS/(|a|+|b|) over the lowercased article text (title and sentences), without templates; a hint, not the pipeline's value.",
            "WARC-Payload-Digest is the SHA-1 of the entity body: after removing chunked transfer coding, before content decoding (the gzip page's digest is over the gzip bytes).",
            "revisits: WARC revisit records (identical-payload-digest profile) of earlier responses; they are not documents.",
        ],
        "counts": counts,
        "documents": documents,
        "rejects": rejects,
        "revisits": revisits,
        "clusters": clusters,
        "pairs": pairs,
    }

    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / FILE_NAME).write_bytes(data)
    (out_dir / "expected.json").write_text(json.dumps(expected, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    (out_dir / "README.md").write_text(readme(counts), encoding="utf-8")
    print(json.dumps(counts, indent=1))


def readme(c):
    roles = c["documents_by_role"]
    kinds = c["pairs_by_kind"]
    kind_lines = "\n".join(f"| {k} | {v} |" for k, v in kinds.items())
    site_lines = "\n".join(f"| {SITES[s]['host']} | {SITES[s]['lang']} | {SITES[s]['charset']} | {n} |" for s, n in c["documents_by_site"].items())
    rec = c["records"]
    rej = c["rejects"]
    return f"""# Sample crawl

`{FILE_NAME}` is an invented crawl made for tests and demos by
`scripts/make_sample_data.py` (Python 3 standard library, seed {SEED}). Run
`python3 scripts/make_sample_data.py` to regenerate it; the output is
byte-identical across runs (fixed dates, record ids derived from content,
gzip members with mtime 0; a different zlib version could change the
compressed bytes, not the records). Nothing in it comes from a real site:
the hosts are invented and the text is generated from a few hundred English
and Russian words and phrases.

## Format

WARC/1.1, one gzip member per record (Common Crawl style), {c['bytes']:,} bytes.
The first record is `warcinfo`; every `response` and `revisit` is preceded by
its `request` (linked by `WARC-Concurrent-To`). Responses carry
`WARC-Record-ID` (`<urn:uuid:…>`, deterministic), `WARC-Date`,
`WARC-Target-URI`, `WARC-IP-Address`, `WARC-Block-Digest`,
`WARC-Payload-Digest` (SHA-1, base32), `Content-Type: application/http;
msgtype=response` and an exact `Content-Length`.

| record type | count |
|---|---|
| warcinfo | {rec.get('warcinfo', 0)} |
| request | {rec.get('request', 0)} |
| response | {rec.get('response', 0)} |
| revisit | {rec.get('revisit', 0)} |
| total | {c['records_total']} |

## Content

{c['html_responses']} HTML responses and {c['non_html_responses']} non-HTML responses (3 PNG images, 2 PDF files).
{c['documents']} HTML pages are documents ({roles.get('original', 0)} originals, {roles.get('mirror', 0)} exact mirrors,
{roles.get('near_duplicate', 0)} near-duplicates, {roles.get('syndicated', 0)} syndicated copies); the other responses are
expected rejects: {rej.get('not_html', 0)} `not_html`, {rej.get('empty_text', 0)} `empty_text` (a JavaScript shell
page with no visible text), {rej.get('bad_http', 0)} `bad_http` (status line without a code and header
lines without a colon). {c['revisits']} `revisit` records (profile identical-payload-digest) point
back to earlier responses of the same URL.

| site | language | charset | documents |
|---|---|---|---|
{site_lines}

Each site has its own template (navigation, header, sidebar of other titles,
ad line, footer) around the article. `www.staraya-gazeta.ru` is encoded in
windows-1251, declared only by `<meta charset>` (the HTTP header says
`text/html` without a charset). `mirror.northbay-archive.net` serves exact
copies of Herald pages (counted under the Herald above). Transfer edge cases: one Riverstone page is sent with
`Transfer-Encoding: chunked`, one mirror with `Content-Encoding: gzip`. Five
Herald articles are one- or two-sentence briefs.

## Ground truth (`expected.json`)

- `documents`: every kept page with its site, language, charset, article id,
  role (`original`, `mirror`, `near_duplicate`, `syndicated`), edit kind and
  source URL.
- `rejects` and `revisits`, as above.
- `clusters`: {c['duplicate_clusters']} groups of URLs carrying the same article.
- `pairs`: every two documents of one article, plus 40 unrelated pairs (half
  on the same site, sharing its template). `exact` = identical decoded HTML;
  `near_duplicate` kinds: `words_changed` (3–5 words replaced),
  `sentence_added`, `sentence_removed`, `template_changed` (same text,
  different ad and sidebar), `mixed` (words changed, a sentence added and a
  different ad), `syndicated` (the wire's template and an attribution line),
  `syndicated_recoded` (Russian UTF-8 article republished in windows-1251);
  pairs of two derived pages join their kinds with `+`.
  `article_text_similarity` is 2·LCS/(|a|+|b|) of the lowercased article
  texts without templates, a hint for tests.

| relation:kind | pairs |
|---|---|
{kind_lines}
"""


if __name__ == "__main__":
    main()
