"""Build ``link_citations.jsonl``: OpenAI-style link citations with hand-labelled claims.

Each document below is an answer written in the style of gpt-4o / gpt-5 web-search answers.
A link is written ``⟨domain/path⟩`` and expands to the inline link OpenAI writes,
``([domain](https://domain/path?utm_source=openai))``, whose code-point range is the
annotation's ``start_index``/``end_index``. ``⟨^domain/path⟩`` writes the same text but the
annotation covers only the inner ``[domain](url)``; ``⟨!domain/path⟩`` writes a bare link.

Every link has a label: the claim a careful reader marks as the statement the link supports
(``None`` skips a link). A label is a string, or ``(claim, class)`` to override the
document's class. The claim excludes the link and trailing whitespace; like the plain
sentences of ``tests/core/test_segment.py``, it keeps the terminal period when the link
follows the period and ends before the period when the link precedes it.

    python tests/data/claims/build_link_citations.py   # rewrites link_citations.jsonl
"""

# ruff: noqa: RUF001 (Japanese text uses fullwidth parentheses)
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "link_citations.jsonl"
_LINK_RE = re.compile(r"⟨([!^]?)([^⟩]+)⟩")

Label = str | tuple[str, str] | None

# (id prefix, class, text, labels)
DOCS: list[tuple[str, str, str, list[Label]]] = [
    # --- plain ---------------------------------------------------------------------------------
    (
        "iphone16",
        "plain",
        "Apple unveiled the iPhone 16 lineup on September 9, 2024, at its Cupertino campus. "
        "⟨apple.com/newsroom/2024/09/apple-debuts-iphone-16⟩ The base model starts at $799, "
        "the same price as its predecessor. ⟨theverge.com/2024/9/9/iphone-16-price⟩\n\n"
        "Preorders opened on September 13, with general availability a week later "
        "⟨macrumors.com/2024/09/13/iphone-16-preorders⟩.",
        [
            "Apple unveiled the iPhone 16 lineup on September 9, 2024, at its Cupertino campus.",
            "The base model starts at $799, the same price as its predecessor.",
            "Preorders opened on September 13, with general availability a week later",
        ],
    ),
    (
        "everest",
        "plain",
        "Mount Everest is 8,848.86 meters tall, a figure agreed by China and Nepal in 2020. "
        "⟨nationalgeographic.com/science/article/mount-everest-height⟩ More than 6,000 people "
        "have reached the summit since 1953 ⟨himalayandatabase.com⟩, and the spring season "
        "sees the most attempts ⟨britannica.com/place/Mount-Everest⟩.",
        [
            "Mount Everest is 8,848.86 meters tall, a figure agreed by China and Nepal in 2020.",
            "More than 6,000 people have reached the summit since 1953",
            "and the spring season sees the most attempts",
        ],
    ),
    (
        "jwst",
        "plain",
        "The James Webb Space Telescope launched on December 25, 2021, aboard an Ariane 5 "
        "rocket from French Guiana. ⟨nasa.gov/mission/webb⟩ Its primary mirror is 6.5 meters "
        "across and made of 18 gold-coated beryllium segments. ⟨^esa.int/Science_Exploration"
        "/Space_Science/Webb⟩ Webb orbits the Sun near the second Lagrange point, about 1.5 "
        "million km from Earth. ⟨!webb.nasa.gov/content/about/orbit.html⟩",
        [
            "The James Webb Space Telescope launched on December 25, 2021, aboard an Ariane 5 "
            "rocket from French Guiana.",
            "Its primary mirror is 6.5 meters across and made of 18 gold-coated beryllium "
            "segments.",
            "Webb orbits the Sun near the second Lagrange point, about 1.5 million km from Earth.",
        ],
    ),
    (
        "tsmc",
        "plain",
        "TSMC reported third-quarter net income of NT$325.26 billion, up 54.2% from a year "
        "earlier ⟨pr.tsmc.com/english/news/3181⟩. Advanced technologies (7-nanometer and "
        "below) accounted for 69% of wafer revenue. ⟨investor.tsmc.com/english/quarterly-"
        "results/2024/q3⟩ The company expects capital spending of slightly above $30 billion "
        "for the year. ⟨reuters.com/technology/tsmc-q3-profit-2024-10-17⟩",
        [
            "TSMC reported third-quarter net income of NT$325.26 billion, up 54.2% from a year "
            "earlier",
            "Advanced technologies (7-nanometer and below) accounted for 69% of wafer revenue.",
            "The company expects capital spending of slightly above $30 billion for the year.",
        ],
    ),
    (
        "tesla",
        "plain",
        "Tesla delivered 1.79 million vehicles in 2024 (down about 1% from 2023), its first "
        "annual decline in more than a decade. ⟨ir.tesla.com/press-release/tesla-fourth-quarter"
        "-2024-production-deliveries⟩ BYD sold 4.27 million vehicles in the same period, "
        "including hybrids. ⟨bloomberg.com/news/articles/2025-01-01/byd-sales-2024⟩",
        [
            "Tesla delivered 1.79 million vehicles in 2024 (down about 1% from 2023), its first "
            "annual decline in more than a decade.",
            "BYD sold 4.27 million vehicles in the same period, including hybrids.",
        ],
    ),
    (
        "amazon-river",
        "plain",
        "The Amazon River discharges about 209,000 cubic meters of water per second into the "
        "Atlantic, more than the next seven largest rivers combined. "
        "⟨britannica.com/place/Amazon-River⟩ Its basin covers roughly 7 million square "
        "kilometers across nine countries. ⟨worldwildlife.org/places/amazon⟩ Scientists still "
        "debate whether it is longer than the Nile ⟨smithsonianmag.com/science-nature/amazon-"
        "vs-nile⟩.",
        [
            "The Amazon River discharges about 209,000 cubic meters of water per second into the "
            "Atlantic, more than the next seven largest rivers combined.",
            "Its basin covers roughly 7 million square kilometers across nine countries.",
            "Scientists still debate whether it is longer than the Nile",
        ],
    ),
    (
        "rates",
        "plain",
        "The Federal Reserve cut its benchmark rate by half a percentage point on September 18, "
        "2024, to a range of 4.75% to 5%. ⟨federalreserve.gov/newsevents/pressreleases/"
        "monetary20240918a.htm⟩ It was the first cut since March 2020. "
        "⟨cnbc.com/2024/09/18/fed-cuts-rates⟩\n\nOfficials penciled in another half point of "
        "cuts by year-end ⟨wsj.com/economy/central-banking/fed-dot-plot⟩; markets had expected "
        "slightly more ⟨cmegroup.com/markets/interest-rates/cme-fedwatch-tool.html⟩.",
        [
            "The Federal Reserve cut its benchmark rate by half a percentage point on September "
            "18, 2024, to a range of 4.75% to 5%.",
            "It was the first cut since March 2020.",
            "Officials penciled in another half point of cuts by year-end",
            "markets had expected slightly more",
        ],
    ),
    (
        "chatgpt-users",
        "plain",
        "OpenAI says ChatGPT now has more than 400 million weekly active users. "
        "⟨openai.com/index/chatgpt-weekly-users⟩ That is up from 300 million in December 2024. "
        "⟨theverge.com/openai/chatgpt-300-million-users⟩",
        [
            "OpenAI says ChatGPT now has more than 400 million weekly active users.",
            "That is up from 300 million in December 2024.",
        ],
    ),
    (
        "heatwave",
        "plain",
        "July 2024 was the hottest July on record globally, according to Copernicus. "
        "⟨climate.copernicus.eu/surface-air-temperature-july-2024⟩ The global average surface "
        "air temperature was 16.91°C, 0.68°C above the 1991–2020 average. "
        "⟨climate.copernicus.eu/copernicus-july-2024⟩ Ocean temperatures stayed near record "
        "highs as well. ⟨noaa.gov/news/july-2024-global-climate-report⟩",
        [
            "July 2024 was the hottest July on record globally, according to Copernicus.",
            "The global average surface air temperature was 16.91°C, 0.68°C above the 1991–2020 "
            "average.",
            "Ocean temperatures stayed near record highs as well.",
        ],
    ),
    (
        "rust",
        "plain",
        "Rust 1.83.0 was released on November 28, 2024. ⟨blog.rust-lang.org/2024/11/28/"
        "Rust-1.83.0.html⟩ It extends `const` contexts to allow mutable references. "
        "⟨doc.rust-lang.org/reference/const_eval.html⟩",
        [
            "Rust 1.83.0 was released on November 28, 2024.",
            "It extends `const` contexts to allow mutable references.",
        ],
    ),
    # --- abbreviations ---------------------------------------------------------------------
    (
        "wbd",
        "abbreviation",
        "Warner Bros. Discovery reported second-quarter revenue of $9.7 billion, down 6% year "
        "over year. ⟨wbd.com/news/warner-bros-discovery-reports-second-quarter-2025-results⟩ "
        "The company said Max added 3.6 million subscribers in the quarter. "
        "⟨variety.com/2025/tv/news/max-subscribers-q2-2025⟩ Warner Bros. Discovery also "
        "confirmed plans to split into two companies by mid-2026 ⟨cnbc.com/2025/06/09/warner-"
        "bros-discovery-split⟩.",
        [
            "Warner Bros. Discovery reported second-quarter revenue of $9.7 billion, down 6% "
            "year over year.",
            ("The company said Max added 3.6 million subscribers in the quarter.", "plain"),
            "Warner Bros. Discovery also confirmed plans to split into two companies by mid-2026",
        ],
    ),
    (
        "nvidia",
        "abbreviation",
        "Nvidia Corp. said data-center revenue reached $30.8 billion in the quarter ended Oct. "
        "27. ⟨nvidianews.nvidia.com/news/nvidia-announces-financial-results-for-third-quarter-"
        'fiscal-2025⟩ CEO Jensen Huang called demand for Blackwell "staggering." '
        "⟨cnbc.com/2024/11/20/nvidia-nvda-earnings-report-q3-2025.html⟩",
        [
            "Nvidia Corp. said data-center revenue reached $30.8 billion in the quarter ended "
            "Oct. 27.",
            ('CEO Jensen Huang called demand for Blackwell "staggering."', "quote"),
        ],
    ),
    (
        "figma",
        "abbreviation",
        "The deal, which valued Figma at roughly $20 billion, was announced by Adobe Inc. "
        "in September 2022. ⟨news.adobe.com/news/news-details/2022/adobe-to-acquire-figma⟩ "
        "It was abandoned in December 2023 after pushback from U.K. and EU regulators. "
        "⟨reuters.com/technology/adobe-figma-terminate-deal-2023-12-18⟩",
        [
            "The deal, which valued Figma at roughly $20 billion, was announced by Adobe Inc. "
            "in September 2022.",
            "It was abandoned in December 2023 after pushback from U.K. and EU regulators.",
        ],
    ),
    (
        "us-bank",
        "abbreviation",
        "JPMorgan Chase is the largest bank in the U.S. by assets. ⟨federalreserve.gov/"
        "releases/lbr/current⟩ Rival U.S. Bancorp is roughly a sixth of its size. "
        "⟨fdic.gov/bank-data⟩ JPMorgan had about $4.0 trillion in assets at the end of 2024 "
        "⟨jpmorganchase.com/ir/quarterly-earnings⟩.",
        [
            "JPMorgan Chase is the largest bank in the U.S. by assets.",
            "Rival U.S. Bancorp is roughly a sixth of its size.",
            "JPMorgan had about $4.0 trillion in assets at the end of 2024",
        ],
    ),
    (
        "us-end",
        "abbreviation",
        "Starbucks operates about 16,900 stores in the U.S. It plans to open 500 more "
        "locations in China by 2026. ⟨stories.starbucks.com/press/2024/fy24-q4⟩ The chain "
        "closed hundreds of underperforming stores in the U.S. in 2025. "
        "⟨reuters.com/business/retail-consumer/starbucks-closures⟩",
        [
            "It plans to open 500 more locations in China by 2026.",
            "The chain closed hundreds of underperforming stores in the U.S. in 2025.",
        ],
    ),
    (
        "rowling",
        "abbreviation",
        "Harry Potter and the Philosopher's Stone was published by Bloomsbury in June 1997. "
        "⟨bloomsbury.com/uk/harry-potter⟩ Author J. K. Rowling wrote much of the first draft "
        "in Edinburgh cafés. ⟨edinburgh.org/harry-potter-trail⟩ J. R. R. Tolkien's The Hobbit "
        "had appeared 60 years earlier ⟨tolkienestate.com/the-hobbit⟩.",
        [
            "Harry Potter and the Philosopher's Stone was published by Bloomsbury in June 1997.",
            "Author J. K. Rowling wrote much of the first draft in Edinburgh cafés.",
            "J. R. R. Tolkien's The Hobbit had appeared 60 years earlier",
        ],
    ),
    (
        "airlines",
        "abbreviation",
        "Budget airlines (e.g. Ryanair and easyJet) now carry more passengers within Europe "
        "than legacy carriers. ⟨eurocontrol.int/publication/european-aviation-overview⟩ Ryanair "
        "flew 183.7 million passengers in FY2024 vs. 168.6 million a year earlier. "
        "⟨corporate.ryanair.com/news/fy24-results⟩ Fares rose about 21%, i.e. faster than "
        "costs. ⟨ft.com/content/ryanair-fares⟩",
        [
            "Budget airlines (e.g. Ryanair and easyJet) now carry more passengers within Europe "
            "than legacy carriers.",
            "Ryanair flew 183.7 million passengers in FY2024 vs. 168.6 million a year earlier.",
            "Fares rose about 21%, i.e. faster than costs.",
        ],
    ),
    (
        "fauci",
        "abbreviation",
        "Dr. Anthony Fauci served as director of NIAID from 1984 to 2022. "
        "⟨niaid.nih.gov/about/anthony-s-fauci-md-bio⟩ He grew up in Brooklyn and attended "
        "Regis High School on E. 84th St. in Manhattan. ⟨britannica.com/biography/Anthony-"
        "Fauci⟩ Dr. Fauci was succeeded by Dr. Jeanne Marrazzo ⟨nih.gov/news-events/news-"
        "releases/marrazzo-niaid-director⟩.",
        [
            "Dr. Anthony Fauci served as director of NIAID from 1984 to 2022.",
            "He grew up in Brooklyn and attended Regis High School on E. 84th St. in Manhattan.",
            "Dr. Fauci was succeeded by Dr. Jeanne Marrazzo",
        ],
    ),
    (
        "chanel",
        "abbreviation",
        "Chanel No. 5 was launched in 1921 and created by perfumer Ernest Beaux. "
        "⟨chanel.com/us/fragrance/n5-history⟩ It remains one of the best-selling perfumes in "
        "the world, with a bottle reportedly sold every 30 seconds. ⟨vogue.com/article/chanel-"
        "no-5-history⟩",
        [
            "Chanel No. 5 was launched in 1921 and created by perfumer Ernest Beaux.",
            "It remains one of the best-selling perfumes in the world, with a bottle reportedly "
            "sold every 30 seconds.",
        ],
    ),
    (
        "python313",
        "abbreviation",
        "Python 3.13 was released on Oct. 7, 2024, and adds an experimental free-threaded "
        "build. ⟨python.org/downloads/release/python-3130⟩ Version 3.13.1 followed in December "
        "with about 400 bug fixes. ⟨docs.python.org/3/whatsnew/changelog.html⟩ NumPy 2.1 "
        "supports it ⟨numpy.org/news⟩.",
        [
            "Python 3.13 was released on Oct. 7, 2024, and adds an experimental free-threaded "
            "build.",
            "Version 3.13.1 followed in December with about 400 bug fixes.",
            "NumPy 2.1 supports it",
        ],
    ),
    (
        "stpauls",
        "abbreviation",
        "St. Paul's Cathedral was completed in 1710 to a design by Sir Christopher Wren. "
        "⟨stpauls.co.uk/history-collections/history⟩ The dome rises 111 m above the street. "
        "⟨britannica.com/topic/Saint-Pauls-Cathedral-London⟩ Admission costs £26 for adults "
        "(approx. US$33). ⟨stpauls.co.uk/visit/tickets⟩",
        [
            "St. Paul's Cathedral was completed in 1710 to a design by Sir Christopher Wren.",
            "The dome rises 111 m above the street.",
            "Admission costs £26 for adults (approx. US$33).",
        ],
    ),
    (
        "gov",
        "abbreviation",
        "Gov. Gavin Newsom signed SB 1047's successor, SB 53, into law on Sept. 29, 2025. "
        "⟨gov.ca.gov/2025/09/29/sb-53⟩ Sen. Scott Wiener authored both bills. "
        "⟨sd11.senate.ca.gov/news/sb-53⟩ The law applies to developers with more than $500 "
        "million in annual revenue ⟨techcrunch.com/2025/09/29/california-sb-53⟩.",
        [
            "Gov. Gavin Newsom signed SB 1047's successor, SB 53, into law on Sept. 29, 2025.",
            "Sen. Scott Wiener authored both bills.",
            "The law applies to developers with more than $500 million in annual revenue",
        ],
    ),
    (
        "macron",
        "abbreviation",
        "M. Macron a nommé Michel Barnier Premier ministre le 5 septembre 2024. "
        "⟨elysee.fr/emmanuel-macron/2024/09/05/nomination⟩ Mme Borne avait quitté Matignon en "
        "janvier. ⟨lemonde.fr/politique/article/2024/01/08/elisabeth-borne-demission⟩ M. Barnier "
        "a été renversé par une motion de censure le 4 décembre ⟨francetvinfo.fr/politique/"
        "michel-barnier/censure⟩.",
        [
            "M. Macron a nommé Michel Barnier Premier ministre le 5 septembre 2024.",
            "Mme Borne avait quitté Matignon en janvier.",
            "M. Barnier a été renversé par une motion de censure le 4 décembre",
        ],
    ),
    (
        "mietpreis",
        "abbreviation",
        "Viele Städte, z. B. München und Frankfurt, fallen unter die Mietpreisbremse. "
        "⟨bmj.de/DE/themen/mietrecht/mietpreisbremse⟩ Die Regelung gilt nun bis Ende 2029, "
        "d. h. vier Jahre länger als bisher geplant. ⟨tagesschau.de/inland/mietpreisbremse-"
        "verlaengerung⟩",
        [
            "Viele Städte, z. B. München und Frankfurt, fallen unter die Mietpreisbremse.",
            "Die Regelung gilt nun bis Ende 2029, d. h. vier Jahre länger als bisher geplant.",
        ],
    ),
    (
        "bahn",
        "abbreviation",
        "Die Deutsche Bahn meldete für 2024 einen Verlust von 1,8 Mrd. Euro. "
        "⟨deutschebahn.com/de/presse/bilanz-2024⟩ Am 27. März 2025 stellte der Konzern seine "
        "Bilanz in Berlin vor. ⟨spiegel.de/wirtschaft/deutsche-bahn-bilanz-2025⟩ Der Umsatz "
        "lag bei rund 26,2 Mio. Euro pro Tag ⟨faz.net/aktuell/wirtschaft/bahn-umsatz⟩.",
        [
            "Die Deutsche Bahn meldete für 2024 einen Verlust von 1,8 Mrd. Euro.",
            "Am 27. März 2025 stellte der Konzern seine Bilanz in Berlin vor.",
            "Der Umsatz lag bei rund 26,2 Mio. Euro pro Tag",
        ],
    ),
    (
        "inc-lower",
        "abbreviation",
        "Meta Platforms Inc. reported revenue of $40.6 billion for the second quarter. "
        "⟨investor.atmeta.com/investor-news/q2-2024⟩ Alphabet Inc. Chief Executive Sundar "
        "Pichai said AI Overviews now reach more than 1 billion users. "
        "⟨blog.google/inside-google/message-ceo/alphabet-earnings-q2-2024⟩",
        [
            "Meta Platforms Inc. reported revenue of $40.6 billion for the second quarter.",
            "Alphabet Inc. Chief Executive Sundar Pichai said AI Overviews now reach more than 1 "
            "billion users.",
        ],
    ),
    (
        "ave",
        "abbreviation",
        "The Empire State Building stands at 350 Fifth Ave. in Midtown Manhattan. "
        "⟨esbnyc.com/about⟩ Its observation deck on the 86th floor opens at 9 a.m. daily. "
        "⟨esbnyc.com/buy-tickets⟩ Tickets start at $44 for adults ⟨timeout.com/newyork/"
        "attractions/empire-state-building⟩.",
        [
            "The Empire State Building stands at 350 Fifth Ave. in Midtown Manhattan.",
            "Its observation deck on the 86th floor opens at 9 a.m. daily.",
            "Tickets start at $44 for adults",
        ],
    ),
    (
        "jr",
        "abbreviation",
        "Martin Luther King Jr. Day falls on the third Monday of January. "
        "⟨nationaltoday.com/mlk-day⟩ Robert F. Kennedy Jr. was confirmed as health secretary "
        "on Feb. 13, 2025. ⟨apnews.com/article/rfk-jr-confirmed-hhs⟩",
        [
            "Martin Luther King Jr. Day falls on the third Monday of January.",
            "Robert F. Kennedy Jr. was confirmed as health secretary on Feb. 13, 2025.",
        ],
    ),
    (
        "sanofi",
        "abbreviation",
        "Sanofi S.A. a annoncé un chiffre d'affaires de 41,1 milliards d'euros pour 2024. "
        "⟨sanofi.com/fr/media-room/communiques-de-presse/2025/resultats-2024⟩ Le groupe "
        "prévoit env. 3 % de croissance en 2025. ⟨lesechos.fr/industrie-services/pharmacie-"
        "sante/sanofi-previsions-2025⟩",
        [
            "Sanofi S.A. a annoncé un chiffre d'affaires de 41,1 milliards d'euros pour 2024.",
            "Le groupe prévoit env. 3 % de croissance en 2025.",
        ],
    ),
    (
        "reichstag",
        "abbreviation",
        "Der Reichstag wurde am 5. Dezember 1894 fertiggestellt. ⟨bundestag.de/besuche/"
        "architektur/reichstag/geschichte⟩ Im 19. Jh. galt er als eines der modernsten "
        "Parlamentsgebäude Europas. ⟨berlin.de/sehenswuerdigkeiten/reichstagsgebaeude⟩",
        [
            "Der Reichstag wurde am 5. Dezember 1894 fertiggestellt.",
            "Im 19. Jh. galt er als eines der modernsten Parlamentsgebäude Europas.",
        ],
    ),
    # --- parenthetical pointers ---------------------------------------------------------------
    (
        "msft-see",
        "parenthetical",
        "Microsoft's Intelligent Cloud revenue rose 20% to $28.5 billion in the quarter (see "
        "the company blog + news coverage). ⟨microsoft.com/en-us/investor/earnings/fy-2025-q2⟩",
        ["Microsoft's Intelligent Cloud revenue rose 20% to $28.5 billion in the quarter"],
    ),
    (
        "revenue-own",
        "parenthetical",
        "Shopify's revenue rose 26% to $2.16 billion in the second quarter. (See the company "
        "blog and news coverage.) ⟨shopify.com/news/q2-2024-results⟩",
        ["Shopify's revenue rose 26% to $2.16 billion in the second quarter."],
    ),
    (
        "spotify-per",
        "parenthetical",
        "Spotify reached 675 million monthly active users in the first quarter (per the "
        "shareholder letter ⟨investors.spotify.com/financials/q1-2025⟩). Premium subscribers "
        "grew 12% to 268 million ⟨newsroom.spotify.com/2025-04-29/q1-2025⟩.",
        [
            "Spotify reached 675 million monthly active users in the first quarter",
            "Premium subscribers grew 12% to 268 million",
        ],
    ),
    (
        "ban-source",
        "parenthetical",
        "Australia's ban on social media for under-16s takes effect on Dec. 10, 2025 (sources: "
        "Reuters ⟨reuters.com/world/asia-pacific/australia-social-media-ban⟩, ABC News "
        "⟨abc.net.au/news/2025-social-media-ban⟩).",
        [
            "Australia's ban on social media for under-16s takes effect on Dec. 10, 2025",
            "Australia's ban on social media for under-16s takes effect on Dec. 10, 2025",
        ],
    ),
    (
        "via",
        "parenthetical",
        "Global EV sales topped 17 million in 2024, up about 25% (via IEA data). "
        "⟨iea.org/reports/global-ev-outlook-2025⟩ China accounted for nearly two-thirds of "
        "them. ⟨iea.org/reports/global-ev-outlook-2025/trends⟩",
        [
            "Global EV sales topped 17 million in 2024, up about 25%",
            ("China accounted for nearly two-thirds of them.", "plain"),
        ],
    ),
    (
        "voir",
        "parenthetical",
        "La SNCF a transporté 122 millions de voyageurs en TGV en 2024 (voir le communiqué "
        "et la presse). ⟨groupe-sncf.com/fr/medias/communiques-de-presse/bilan-2024⟩",
        ["La SNCF a transporté 122 millions de voyageurs en TGV en 2024"],
    ),
    (
        "siehe",
        "parenthetical",
        "Die Inflationsrate in Deutschland lag im Juni bei 2,0 % (siehe Destatis-Mitteilung). "
        "⟨destatis.de/DE/Presse/Pressemitteilungen/2025/06/PD25_inflation.html⟩",
        ["Die Inflationsrate in Deutschland lag im Juni bei 2,0 %"],
    ),
    (
        "according",
        "parenthetical",
        "Netflix added 18.9 million subscribers in Q4 2024 (according to its investor letter "
        "⟨ir.netflix.net/financials/quarterly-earnings⟩), a record for a single quarter.",
        ["Netflix added 18.9 million subscribers in Q4 2024"],
    ),
    (
        "cf",
        "parenthetical",
        "Coffee consumption is linked to a lower risk of type 2 diabetes (cf. the 2014 "
        "meta-analysis ⟨diabetologia.org/2014/coffee-meta-analysis⟩ and a later cohort study "
        "⟨bmj.com/content/359/bmj.j5024⟩).",
        [
            "Coffee consumption is linked to a lower risk of type 2 diabetes",
            "Coffee consumption is linked to a lower risk of type 2 diabetes",
        ],
    ),
    (
        "see-also",
        "parenthetical",
        "Japan's population fell by 898,000 in 2024 to 120.3 million Japanese nationals. "
        "⟨soumu.go.jp/main_sosiki/jichi_gyousei/daityo/jinkou_jinkoudoutai-setaisuu.html⟩ "
        "(See also the NHK report ⟨nhk.or.jp/news/population-2024⟩.)",
        [
            "Japan's population fell by 898,000 in 2024 to 120.3 million Japanese nationals.",
            "Japan's population fell by 898,000 in 2024 to 120.3 million Japanese nationals.",
        ],
    ),
    (
        "content-paren",
        "parenthetical",
        "Airbus delivered 766 aircraft in 2024 (up from 735 in 2023). ⟨airbus.com/en/"
        "newsroom/press-releases/2025-01-airbus-2024-deliveries⟩ Boeing delivered 348 "
        "(details in its annual report). ⟨investors.boeing.com/investors/annual-report⟩",
        [
            "Airbus delivered 766 aircraft in 2024 (up from 735 in 2023).",
            "Boeing delivered 348",
        ],
    ),
    # --- quotes ------------------------------------------------------------------------------
    (
        "walmart-quote",
        "quote",
        "“We are not going to raise prices this year…” CEO Doug McMillon told reporters on "
        "Thursday. ⟨apnews.com/article/walmart-prices-tariffs⟩ Walmart shares rose 2% after "
        "the remarks. ⟨marketwatch.com/story/walmart-stock⟩",
        [
            "“We are not going to raise prices this year…” CEO Doug McMillon told reporters on "
            "Thursday.",
            ("Walmart shares rose 2% after the remarks.", "plain"),
        ],
    ),
    (
        "ascii-quote",
        "quote",
        'The Fed statement said inflation "remains somewhat elevated..." Chair Jerome Powell '
        "repeated that message at his press conference. ⟨federalreserve.gov/newsevents/"
        "pressreleases/monetary20250129a.htm⟩",
        ["Chair Jerome Powell repeated that message at his press conference."],
    ),
    (
        "french-quote",
        "quote",
        "« Nous ne reculerons pas… » Gabriel Attal l'a répété mardi devant l'Assemblée "
        "nationale. ⟨lemonde.fr/politique/article/2024/attal-assemblee⟩ Le texte a été adopté "
        "par 320 voix contre 210. ⟨publicsenat.fr/actualites/vote-reforme⟩",
        [
            "« Nous ne reculerons pas… » Gabriel Attal l'a répété mardi devant l'Assemblée "
            "nationale.",
            ("Le texte a été adopté par 320 voix contre 210.", "non_ascii"),
        ],
    ),
    (
        "quote-mid",
        "quote",
        "Sam Altman wrote that “the intelligence age is coming…” OpenAI has since raised "
        "$40 billion at a $300 billion valuation. ⟨openai.com/index/march-funding-updates⟩",
        ["OpenAI has since raised $40 billion at a $300 billion valuation."],
    ),
    (
        "quote-end",
        "quote",
        "Nadella described the quarter as “a strong start to the fiscal year.” "
        "⟨news.microsoft.com/fy25q1⟩ Azure grew 33%. ⟨microsoft.com/en-us/investor⟩",
        [
            "Nadella described the quarter as “a strong start to the fiscal year.”",
            "Azure grew 33%.",
        ],
    ),
    (
        "quote-new-sentence",
        "quote",
        "The CEO said only that the company was “reviewing all options…” The board meets "
        "again in March. ⟨bloomberg.com/news/articles/board-review⟩",
        ["The board meets again in March."],
    ),
    (
        "quote-german",
        "quote",
        "„Wir schaffen das…“ Angela Merkel sagte diesen Satz am 31. August 2015. "
        "⟨bundesregierung.de/breg-de/aktuelles/sommerpressekonferenz-2015⟩",
        ["„Wir schaffen das…“ Angela Merkel sagte diesen Satz am 31. August 2015."],
    ),
    (
        "quote-guillemet",
        "quote",
        "Le rapport parle d'une situation « préoccupante… » Les auteurs recommandent un plan "
        "d'urgence. ⟨vie-publique.fr/rapport/2024-situation⟩",
        ["Les auteurs recommandent un plan d'urgence."],
    ),
    (
        "huang-quote",
        "quote",
        "“Demand for Blackwell is insane…” Huang said at Computex in Taipei. "
        '⟨reuters.com/technology/nvidia-computex-2024⟩ "We have no plans to sell..." Musk '
        "wrote on X on Monday. ⟨x.com/elonmusk/status/1850000000000000000⟩",
        [
            "“Demand for Blackwell is insane…” Huang said at Computex in Taipei.",
            '"We have no plans to sell..." Musk wrote on X on Monday.',
        ],
    ),
    (
        "quote-inside-link",
        "quote",
        "Apple called Vision Pro “the most advanced personal electronics device ever.” "
        "⟨apple.com/newsroom/2023/06/introducing-apple-vision-pro⟩ Reviewers were split. "
        "⟨theverge.com/23604218/apple-vision-pro-review⟩",
        [
            "Apple called Vision Pro “the most advanced personal electronics device ever.”",
            ("Reviewers were split.", "plain"),
        ],
    ),
    # --- bullets -----------------------------------------------------------------------------
    (
        "dot-bullets",
        "bullet",
        "Here are the key specs:\n\n• Display: 6.1-inch Super Retina XDR "
        "⟨apple.com/iphone-16/specs⟩\n• Chip: A18 with a 6-core CPU ⟨apple.com/newsroom/2024/09/"
        "a18⟩\n• Battery: up to 22 hours of video playback ⟨gsmarena.com/apple_iphone_16-"
        "13317.php⟩",
        [
            "Display: 6.1-inch Super Retina XDR",
            "Chip: A18 with a 6-core CPU",
            "Battery: up to 22 hours of video playback",
        ],
    ),
    (
        "dot-bullets-sentences",
        "bullet",
        "Quick facts:\n• The museum is closed on Tuesdays. ⟨louvre.fr/en/visit/hours⟩\n"
        "• Tickets cost €22 when booked online. ⟨louvre.fr/en/visit/tickets⟩\n"
        "• About 8.7 million people visited in 2024. ⟨theartnewspaper.com/2025/louvre-"
        "visitors⟩",
        [
            "The museum is closed on Tuesdays.",
            "Tickets cost €22 when booked online.",
            "About 8.7 million people visited in 2024.",
        ],
    ),
    (
        "dash-bullets",
        "bullet",
        "Les sites les plus visités :\n– Le Louvre : 8,7 millions de visiteurs en 2024 "
        "⟨louvre.fr/actualites/frequentation-2024⟩\n– Le château de Versailles : 8,4 millions "
        "⟨chateauversailles.fr/actualites/bilan-2024⟩\n– Le musée d'Orsay : 3,8 millions "
        "⟨musee-orsay.fr/fr/actualites/frequentation⟩",
        [
            "Le Louvre : 8,7 millions de visiteurs en 2024",
            "Le château de Versailles : 8,4 millions",
            "Le musée d'Orsay : 3,8 millions",
        ],
    ),
    (
        "letter-bullets",
        "bullet",
        "Two rail passes stand out:\na) The Eurail Global Pass, valid in 33 countries "
        "⟨eurail.com/en/eurail-passes/global-pass⟩\nb) The Interrail pass, for EU residents "
        "only ⟨interrail.eu/en/interrail-passes⟩",
        [
            "The Eurail Global Pass, valid in 33 countries",
            "The Interrail pass, for EU residents only",
        ],
    ),
    (
        "hyphen-bold",
        "bullet",
        "**Galaxy S25 Ultra at a glance**\n\n- **Price:** $1,299 for 256 GB "
        "⟨samsung.com/us/smartphones/galaxy-s25-ultra⟩\n- **Weight:** 218 g "
        "⟨gsmarena.com/samsung_galaxy_s25_ultra-13322.php⟩\n- **Battery:** 5,000 mAh, same as "
        "last year. ⟨theverge.com/galaxy-s25-ultra-review⟩",
        [
            "**Price:** $1,299 for 256 GB",
            "**Weight:** 218 g",
            "**Battery:** 5,000 mAh, same as last year.",
        ],
    ),
    (
        "star-bullets",
        "bullet",
        "* The Colosseum could hold an estimated 50,000 spectators. "
        "⟨britannica.com/topic/Colosseum⟩\n* It was completed in 80 AD under Emperor Titus. "
        "⟨colosseo.it/en/area/the-colosseum⟩",
        [
            "The Colosseum could hold an estimated 50,000 spectators.",
            "It was completed in 80 AD under Emperor Titus.",
        ],
    ),
    (
        "paren-num-bullets",
        "bullet",
        "Tips for visiting:\n1) Book tickets at least two weeks ahead "
        "⟨sagradafamilia.org/en/tickets⟩\n2) Arrive before 9 a.m. to avoid the longest queues "
        "⟨timeout.com/barcelona/attractions/sagrada-familia⟩",
        [
            "Book tickets at least two weeks ahead",
            "Arrive before 9 a.m. to avoid the longest queues",
        ],
    ),
    (
        "inline-dot-bullets",
        "bullet",
        "Highlights: • 120 Hz display ⟨oneplus.com/13/specs⟩ • 6,000 mAh battery "
        "⟨gsmarena.com/oneplus_13-13477.php⟩ • 100 W charging ⟨androidauthority.com/oneplus-13-"
        "review⟩",
        ["120 Hz display", "6,000 mAh battery", "100 W charging"],
    ),
    (
        "nested-bullets",
        "bullet",
        "- **Cities**\n  - Tokyo has about 14 million residents. ⟨metro.tokyo.lg.jp/english/"
        "about/population⟩\n  - Osaka has about 2.8 million. ⟨city.osaka.lg.jp/toshikeikaku/"
        "page/0000014987.html⟩",
        [
            "Tokyo has about 14 million residents.",
            "Osaka has about 2.8 million.",
        ],
    ),
    (
        "dot-bullets-no-space",
        "bullet",
        "Open now:\n•Musée Rodin, until 6:30 p.m. ⟨musee-rodin.fr/visiter⟩\n•Centre Pompidou, "
        "until 9 p.m. ⟨centrepompidou.fr/fr/horaires⟩",
        ["Musée Rodin, until 6:30 p.m.", "Centre Pompidou, until 9 p.m."],
    ),
    (
        "checkbox",
        "bullet",
        "Before you fly:\n- [ ] Check that your passport is valid for six months "
        "⟨travel.state.gov/passports⟩\n- [ ] Register with STEP for alerts "
        "⟨step.state.gov/step⟩",
        [
            "Check that your passport is valid for six months",
            "Register with STEP for alerts",
        ],
    ),
    # --- numbered ----------------------------------------------------------------------------
    (
        "kyoto",
        "numbered",
        "Top destinations in Kansai:\n\n1. **Kyoto** — Over 1,600 temples, including "
        "Kinkaku-ji. ⟨japan-guide.com/e/e2158.html⟩\n2. **Nara** — Home to Tōdai-ji and about "
        "1,300 free-roaming deer. ⟨visitnara.jp/venues/A00380⟩\n3. **Osaka** — Known for "
        "street food in Dōtonbori ⟨osaka-info.jp/en/spot/dotonbori⟩.",
        [
            "**Kyoto** — Over 1,600 temples, including Kinkaku-ji.",
            "**Nara** — Home to Tōdai-ji and about 1,300 free-roaming deer.",
            "**Osaka** — Known for street food in Dōtonbori",
        ],
    ),
    (
        "steps",
        "numbered",
        "1. Open **Settings** and tap **General**. ⟨support.apple.com/en-us/118408⟩\n"
        "2. Tap **Software Update** to check for iOS 18.2. ⟨support.apple.com/en-us/118575⟩\n"
        "3. Keep the phone charging during the install. ⟨macrumors.com/how-to/update-iphone⟩",
        [
            "Open **Settings** and tap **General**.",
            "Tap **Software Update** to check for iOS 18.2.",
            "Keep the phone charging during the install.",
        ],
    ),
    (
        "numbered-two-sentences",
        "numbered",
        "1. The Shinkansen opened in 1964. It cut the Tokyo–Osaka trip to four hours. "
        "⟨global.jr-central.co.jp/en/company/about_shinkansen⟩\n2. Today the fastest Nozomi "
        "takes 2 h 21 min ⟨japan-guide.com/e/e2018.html⟩.",
        [
            "It cut the Tokyo–Osaka trip to four hours.",
            "Today the fastest Nozomi takes 2 h 21 min",
        ],
    ),
    (
        "numbered-de",
        "numbered",
        "1. Der Bodensee ist mit 536 km² der größte See Deutschlands. "
        "⟨bodensee.eu/de/ueber-den-bodensee⟩\n2. Die Zugspitze ist mit 2.962 m der höchste Berg "
        "⟨zugspitze.de/de/Berg-Info⟩.",
        [
            "Der Bodensee ist mit 536 km² der größte See Deutschlands.",
            "Die Zugspitze ist mit 2.962 m der höchste Berg",
        ],
    ),
    # --- offers ------------------------------------------------------------------------------
    (
        "boeing-offer",
        "offer",
        "Shares of Boeing fell 4.1% on Wednesday after the company disclosed a $3.5 billion "
        "charge. If you want, I can open those stories and pull the exact figures. "
        "⟨reuters.com/business/aerospace-defense/boeing-charge⟩",
        [
            "Shares of Boeing fell 4.1% on Wednesday after the company disclosed a $3.5 billion "
            "charge."
        ],
    ),
    (
        "fed-offer",
        "offer",
        "The Fed held rates at 4.25%–4.50% on Wednesday and still projects two cuts this year."
        "\n\nWant me to pull the full statement or the dot plot? "
        "⟨federalreserve.gov/newsevents/pressreleases/monetary20250319a.htm⟩",
        ["The Fed held rates at 4.25%–4.50% on Wednesday and still projects two cuts this year."],
    ),
    (
        "orsay-offer",
        "offer",
        "Le musée d'Orsay rouvre le 15 janvier après deux mois de travaux. Si vous voulez, je "
        "peux vérifier les horaires exacts. ⟨musee-orsay.fr/fr/actualites/reouverture⟩",
        ["Le musée d'Orsay rouvre le 15 janvier après deux mois de travaux."],
    ),
    (
        "ber-offer",
        "offer",
        "Der Berliner Flughafen BER zählte 2024 rund 25,5 Millionen Passagiere. Wenn du "
        "möchtest, kann ich dir die Zahlen nach Monat aufschlüsseln. "
        "⟨berlin-airport.de/de/presse/verkehrszahlen-2024⟩",
        ["Der Berliner Flughafen BER zählte 2024 rund 25,5 Millionen Passagiere."],
    ),
    (
        "s25-offer",
        "offer",
        "- The Galaxy S25 Ultra starts at $1,299. ⟨samsung.com/us/smartphones/galaxy-s25-"
        "ultra/buy⟩\n- It ships with seven years of OS updates.\n\nIf you'd like, I can also "
        "compare it with the Pixel 9 Pro. ⟨store.google.com/product/pixel_9_pro⟩",
        [
            ("The Galaxy S25 Ultra starts at $1,299.", "bullet"),
            "It ships with seven years of OS updates.",
        ],
    ),
    (
        "skytree-offer",
        "offer",
        "東京スカイツリーの高さは634メートルです。ご希望があれば、営業時間も調べます。"
        "⟨tokyo-skytree.jp/about⟩",
        ["東京スカイツリーの高さは634メートルです。"],
    ),
    (
        "open-stories",
        "offer",
        "Several outlets report that the merger talks have stalled over valuation. If you want "
        "I can open those stories and summarize each one. ⟨ft.com/content/merger-talks-stall⟩ "
        "⟨wsj.com/business/deals/merger-talks⟩",
        [
            "Several outlets report that the merger talks have stalled over valuation.",
            "Several outlets report that the merger talks have stalled over valuation.",
        ],
    ),
    (
        "let-me-know",
        "offer",
        "The Pixel 9a goes on sale on April 10 for $499. Let me know if you'd like a "
        "comparison with the iPhone 16e. ⟨blog.google/products/pixel/pixel-9a⟩",
        ["The Pixel 9a goes on sale on April 10 for $499."],
    ),
    (
        "would-you-like",
        "offer",
        "Lisbon's new metro line is scheduled to open in 2026.\n\nWould you like me to look "
        "up the station list? ⟨metrolisboa.pt/expansao⟩",
        ["Lisbon's new metro line is scheduled to open in 2026."],
    ),
    (
        "i-can-also",
        "offer",
        "The 2025 Tour de France starts in Lille on July 5. ⟨letour.fr/en/overall-route⟩ "
        "I can also list the mountain stages if that helps. ⟨cyclingnews.com/tour-de-france-"
        "2025-route⟩",
        [
            ("The 2025 Tour de France starts in Lille on July 5.", "plain"),
            "The 2025 Tour de France starts in Lille on July 5.",
        ],
    ),
    (
        "soll-ich",
        "offer",
        "Die A7 ist mit 963 km die längste Autobahn Deutschlands. Soll ich dir auch die "
        "kürzeste heraussuchen? ⟨autobahn.de/wissenswertes/laengste-autobahn⟩",
        ["Die A7 ist mit 963 km die längste Autobahn Deutschlands."],
    ),
    # --- tables ------------------------------------------------------------------------------
    (
        "phones-table",
        "table",
        "| Model | Price | Battery |\n|---|---|---|\n| Pixel 9 | $799 "
        "⟨store.google.com/product/pixel_9⟩ | 4,700 mAh ⟨gsmarena.com/google_pixel_9-13219.php⟩ "
        "|\n| iPhone 16 | $829 ⟨apple.com/shop/buy-iphone/iphone-16⟩ | 3,561 mAh "
        "⟨gsmarena.com/apple_iphone_16-13317.php⟩ |",
        ["$799", "4,700 mAh", "$829", "3,561 mAh"],
    ),
    (
        "cities-table",
        "table",
        "Population of the largest cities:\n\n| City | Population |\n| --- | --- |\n| Tokyo | "
        "13.99 million ⟨metro.tokyo.lg.jp/english/about/population⟩ |\n| Delhi | 16.8 million "
        "(2011 census) ⟨censusindia.gov.in⟩ |\n| Shanghai | 24.87 million | "
        "⟨stats.gov.cn/english⟩ |",
        ["13.99 million", "16.8 million (2011 census)", "24.87 million"],
    ),
    (
        "de-table",
        "table",
        "| Stadt | Einwohner |\n|:--|--:|\n| Berlin | 3,9 Mio. ⟨statistik-berlin-brandenburg.de⟩ "
        "|\n| München | ca. 1,5 Mio. ⟨stadt.muenchen.de/infos/statistik⟩ |",
        ["3,9 Mio.", "ca. 1,5 Mio."],
    ),
    (
        "table-first-cell",
        "table",
        "| Claim | Source |\n|---|---|\n| The Great Wall is not visible to the naked eye from "
        "orbit. | ⟨nasa.gov/image-article/great-wall⟩ |\n| Goldfish remember for months, not "
        "seconds. | ⟨bbc.com/future/article/goldfish-memory⟩ |",
        [
            "The Great Wall is not visible to the naked eye from orbit.",
            "Goldfish remember for months, not seconds.",
        ],
    ),
    # --- headings ----------------------------------------------------------------------------
    (
        "headphones",
        "heading",
        "## Best overall: Sony WH-1000XM5 ⟨rtings.com/headphones/reviews/sony/wh-1000xm5⟩\n\n"
        "The XM5 offers up to 30 hours of battery life with noise cancelling on. "
        "⟨sony.com/electronics/headband-headphones/wh-1000xm5⟩\n\n"
        "### Best budget pick: Soundcore Space Q45 ⟨wirecutter.com/reviews/best-noise-"
        "cancelling-headphones⟩",
        [
            "Best overall: Sony WH-1000XM5",
            ("The XM5 offers up to 30 hours of battery life with noise cancelling on.", "plain"),
            "Best budget pick: Soundcore Space Q45",
        ],
    ),
    (
        "heading-ja",
        "heading",
        "### 東京の人口 ⟨metro.tokyo.lg.jp/tosei/hodohappyo/press/2025/01/jinko⟩\n\n"
        "東京都の人口は約1,418万人です。⟨toukei.metro.tokyo.lg.jp/jsuikei/js-index.htm⟩",
        [
            "東京の人口",
            ("東京都の人口は約1,418万人です。", "non_ascii"),
        ],
    ),
    (
        "heading-bold",
        "heading",
        "**Verdict** ⟨tomsguide.com/phones/pixel-9-pro-review⟩\n\nThe Pixel 9 Pro has the best "
        "camera of any phone we tested this year. ⟨dxomark.com/google-pixel-9-pro-camera-test⟩",
        [
            "**Verdict**",
            ("The Pixel 9 Pro has the best camera of any phone we tested this year.", "plain"),
        ],
    ),
    (
        "heading-setext",
        "heading",
        "Museums in Berlin ⟨visitberlin.de/en/museums-berlin⟩\n=================\n\n"
        "Museum Island holds five museums. ⟨smb.museum/en/museums-institutions/museumsinsel⟩",
        [
            "Museums in Berlin",
            ("Museum Island holds five museums.", "plain"),
        ],
    ),
    # --- several links -----------------------------------------------------------------------
    (
        "olympics",
        "multi_link",
        "The Paris 2024 Olympics sold a record 9.5 million tickets ⟨olympics.com/ioc/news/"
        "paris-2024-ticketing⟩ ⟨lemonde.fr/sport/article/2024/08/11/billetterie⟩. The closing "
        "ceremony took place at the Stade de France on August 11. ⟨paris2024.org/en/closing-"
        "ceremony⟩ ⟨france24.com/en/sport/20240811-closing⟩",
        [
            "The Paris 2024 Olympics sold a record 9.5 million tickets",
            "The Paris 2024 Olympics sold a record 9.5 million tickets",
            "The closing ceremony took place at the Stade de France on August 11.",
            "The closing ceremony took place at the Stade de France on August 11.",
        ],
    ),
    (
        "euro-inflation",
        "multi_link",
        "Inflation in the euro area fell to 2.2% in August ⟨ec.europa.eu/eurostat/web/products-"
        "euro-indicators⟩, while core inflation eased to 2.8% ⟨ecb.europa.eu/press/pr/date/2024⟩; "
        "services inflation stayed above 4% ⟨reuters.com/markets/europe/euro-zone-inflation-"
        "august⟩.",
        [
            "Inflation in the euro area fell to 2.2% in August",
            "while core inflation eased to 2.8%",
            "services inflation stayed above 4%",
        ],
    ),
    (
        "gpt5-style",
        "multi_link",
        "**Short answer:** yes — the Model Y was the world's best-selling car in 2023 "
        "⟨motor1.com/news/model-y-best-selling-car-2023⟩, ahead of the Toyota RAV4 "
        "⟨jato.com/resources/global-car-sales-2023⟩. In 2024 the RAV4 took the top spot again. "
        "⟨focus2move.com/world-car-market-2024⟩ ⟨carscoops.com/2025/02/rav4-best-seller⟩",
        [
            "**Short answer:** yes — the Model Y was the world's best-selling car in 2023",
            "ahead of the Toyota RAV4",
            "In 2024 the RAV4 took the top spot again.",
            "In 2024 the RAV4 took the top spot again.",
        ],
    ),
    (
        "links-glued",
        "multi_link",
        "Lyon is France's third-largest city.⟨fr.wikipedia.org/wiki/Lyon⟩⟨insee.fr/fr/"
        "statistiques/lyon⟩ Marseille is second. ⟨insee.fr/fr/statistiques/marseille⟩",
        [
            "Lyon is France's third-largest city.",
            "Lyon is France's third-largest city.",
            "Marseille is second.",
        ],
    ),
    (
        "inner-links",
        "multi_link",
        "Greenland's ice sheet lost about 270 billion tonnes of ice per year between 2002 and "
        "2023 ⟨^climate.nasa.gov/vital-signs/ice-sheets⟩ ⟨^nsidc.org/greenland-today⟩. Sea "
        "level rose 4.3 mm per year over the last decade. ⟨^sealevel.nasa.gov/understanding-"
        "sea-level⟩",
        [
            "Greenland's ice sheet lost about 270 billion tonnes of ice per year between 2002 "
            "and 2023",
            "Greenland's ice sheet lost about 270 billion tonnes of ice per year between 2002 "
            "and 2023",
            "Sea level rose 4.3 mm per year over the last decade.",
        ],
    ),
    (
        "semicolon",
        "multi_link",
        "Canada's population passed 41 million in 2024 ⟨statcan.gc.ca/en/dai/smr08/2024/"
        "smr08_population⟩; Australia's reached 27.2 million ⟨abs.gov.au/statistics/people/"
        "population⟩.",
        [
            "Canada's population passed 41 million in 2024",
            "Australia's reached 27.2 million",
        ],
    ),
    # --- non-ASCII ---------------------------------------------------------------------------
    (
        "eiffel",
        "non_ascii",
        "🗼 La tour Eiffel mesure aujourd’hui **330 mètres**, antennes comprises. "
        "⟨toureiffel.paris/fr/le-monument/chiffres-cles⟩ Lors de son inauguration en 1889, "
        "elle culminait à 312 mètres. ⟨fr.wikipedia.org/wiki/Tour_Eiffel⟩\n\nÀ noter : sa "
        "hauteur varie d’une quinzaine de centimètres selon la température ⟨sciencesetavenir.fr/"
        "fondamental/la-tour-eiffel-grandit-en-ete_171204⟩.",
        [
            "🗼 La tour Eiffel mesure aujourd’hui **330 mètres**, antennes comprises.",
            "Lors de son inauguration en 1889, elle culminait à 312 mètres.",
            "À noter : sa hauteur varie d’une quinzaine de centimètres selon la température",
        ],
    ),
    (
        "saopaulo",
        "non_ascii",
        "Segundo o Censo 2022 do IBGE, a cidade de São Paulo tem 11.451.999 habitantes. "
        "⟨ibge.gov.br/cidades-e-estados/sp/sao-paulo.html⟩ A região metropolitana ultrapassa "
        "20 milhões de pessoas 🏙️. ⟨pt.wikipedia.org/wiki/S%C3%A3o_Paulo⟩",
        [
            "Segundo o Censo 2022 do IBGE, a cidade de São Paulo tem 11.451.999 habitantes.",
            "A região metropolitana ultrapassa 20 milhões de pessoas 🏙️.",
        ],
    ),
    (
        "tokyo-tower",
        "non_ascii",
        "東京タワーは1958年に完成しました ⟨tokyotower.co.jp/history⟩。高さは333メートルです。"
        "⟨ja.wikipedia.org/wiki/東京タワー⟩ 現在も展望台は営業しています。⟨tokyotower.co.jp/"
        "observatory⟩",
        [
            "東京タワーは1958年に完成しました",
            "高さは333メートルです。",
            "現在も展望台は営業しています。",
        ],
    ),
    (
        "ja-mixed",
        "non_ascii",
        "任天堂は2025年6月5日にNintendo Switch 2を発売しました。⟨nintendo.co.jp/hardware/"
        "switch2⟩ 価格は49,980円（税込）です。⟨nintendo.co.jp/hardware/switch2/price⟩ "
        "発売後4日間で350万台を販売しました⟨nikkei.com/article/switch2-sales⟩。",
        [
            "任天堂は2025年6月5日にNintendo Switch 2を発売しました。",
            "価格は49,980円（税込）です。",
            "発売後4日間で350万台を販売しました",
        ],
    ),
    (
        "german",
        "non_ascii",
        "Die Zugspitze ist mit 2.962 Metern Deutschlands höchster Berg. "
        "⟨zugspitze.de/de/Berg-Info⟩ Über 500.000 Menschen besuchen sie jährlich. "
        "⟨br.de/nachrichten/bayern/zugspitze-besucher⟩ Ölpreise spielen für den Tourismus kaum "
        "eine Rolle ⟨handelsblatt.com/tourismus-alpen⟩.",
        [
            "Die Zugspitze ist mit 2.962 Metern Deutschlands höchster Berg.",
            "Über 500.000 Menschen besuchen sie jährlich.",
            "Ölpreise spielen für den Tourismus kaum eine Rolle",
        ],
    ),
    (
        "emoji",
        "non_ascii",
        "🚀 SpaceX's Starship completed its third flight test on March 14, 2024. "
        "⟨spacex.com/launches/mission/?missionId=starship-flight-3⟩ 🌍 The ship reentered over "
        "the Indian Ocean. ⟨space.com/spacex-starship-flight-3-launch⟩ ✅ NASA still plans to "
        "use Starship for Artemis III ⟨nasa.gov/humans-in-space/artemis⟩.",
        [
            "🚀 SpaceX's Starship completed its third flight test on March 14, 2024.",
            "🌍 The ship reentered over the Indian Ocean.",
            "✅ NASA still plans to use Starship for Artemis III",
        ],
    ),
    (
        "spanish",
        "non_ascii",
        "¿Cuándo abre la Sagrada Familia? Abre todos los días a las 9:00. "
        "⟨sagradafamilia.org/es/horarios⟩ La torre de Jesucristo alcanzará 172,5 metros "
        "⟨elperiodico.com/es/barcelona/sagrada-familia-torre⟩.",
        [
            "Abre todos los días a las 9:00.",
            "La torre de Jesucristo alcanzará 172,5 metros",
        ],
    ),
    (
        "french-nbsp",
        "non_ascii",
        "Le Mont-Saint-Michel accueille environ 2,5 millions de visiteurs par an\u202f! "
        "⟨ot-montsaintmichel.com/fr/decouvrir⟩ L’abbaye est classée au patrimoine mondial "
        "depuis 1979. ⟨whc.unesco.org/fr/list/80⟩",
        [
            "Le Mont-Saint-Michel accueille environ 2,5 millions de visiteurs par an\u202f!",
            "L’abbaye est classée au patrimoine mondial depuis 1979.",
        ],
    ),
    (
        "korean",
        "non_ascii",
        "서울의 인구는 약 940만 명입니다. ⟨seoul.go.kr/seoul/population.do⟩ 부산은 두 번째로 큰 "
        "도시입니다. ⟨busan.go.kr/index⟩",
        ["서울의 인구는 약 940만 명입니다.", "부산은 두 번째로 큰 도시입니다."],
    ),
    (
        "russian",
        "non_ascii",
        "Население Москвы составляет около 13,1 млн человек. ⟨mos.ru/city/about⟩ Это "
        "крупнейший город Европы. ⟨ru.wikipedia.org/wiki/Москва⟩",
        [
            "Население Москвы составляет около 13,1 млн человек.",
            "Это крупнейший город Европы.",
        ],
    ),
    (
        "zh",
        "non_ascii",
        "长城全长21,196.18公里。⟨chinahighlights.com/greatwall/facts⟩ 它于1987年被列入世界遗产名录"
        "⟨whc.unesco.org/zh/list/438⟩。",
        ["长城全长21,196.18公里。", "它于1987年被列入世界遗产名录"],
    ),
    (
        "emoji-mid",
        "non_ascii",
        "The Great Barrier Reef 🐠 spans about 2,300 km along Queensland's coast. "
        "⟨gbrmpa.gov.au/the-reef/reef-facts⟩ It suffered its fifth mass bleaching since 2016 in "
        "early 2024 🌡️. ⟨aims.gov.au/monitoring/great-barrier-reef-coral-2024⟩",
        [
            "The Great Barrier Reef 🐠 spans about 2,300 km along Queensland's coast.",
            "It suffered its fifth mass bleaching since 2016 in early 2024 🌡️.",
        ],
    ),
    # --- controls: look like a failure class but are plain statements ------------------------
    (
        "ctl-if-you-want",
        "offer",
        "If you want to see the Mona Lisa, book a morning slot at least a week ahead. "
        "⟨louvre.fr/en/visit/tickets⟩ Would-be visitors without a booking are often turned "
        "away in summer. ⟨theguardian.com/travel/2024/louvre-queues⟩",
        [
            "If you want to see the Mona Lisa, book a morning slot at least a week ahead.",
            ("Would-be visitors without a booking are often turned away in summer.", "plain"),
        ],
    ),
    (
        "ctl-per-capita",
        "parenthetical",
        "Norway has the highest share of electric cars in the world (per capita and by new "
        "sales). ⟨ofv.no/bilsalget/bilsalget-i-desember-2024⟩ About 89% of new cars sold there "
        "in 2024 were fully electric (see the OFV figures below). ⟨reuters.com/business/autos-"
        "transportation/norway-ev-share-2024⟩",
        [
            "Norway has the highest share of electric cars in the world (per capita and by new "
            "sales).",
            "About 89% of new cars sold there in 2024 were fully electric",
        ],
    ),
    (
        "ctl-quote-starter",
        "quote",
        "“We’ll see…” The company declined to comment further on the talks. "
        "⟨ft.com/content/talks-comment⟩ “Nothing is decided yet…” a spokesperson added on "
        "Friday. ⟨bloomberg.com/news/articles/talks-spokesperson⟩",
        [
            "The company declined to comment further on the talks.",
            "“Nothing is decided yet…” a spokesperson added on Friday.",
        ],
    ),
    (
        "ctl-am",
        "abbreviation",
        "The store opens at 9 a.m. The café inside opens an hour later. "
        "⟨apple.com/retail/fifthavenue⟩ Staff hand out numbers from 8 a.m. on launch days. "
        "⟨9to5mac.com/2024/09/20/launch-day-lines⟩",
        [
            "The café inside opens an hour later.",
            "Staff hand out numbers from 8 a.m. on launch days.",
        ],
    ),
    (
        "ctl-hyphen",
        "plain",
        "The Wi-Fi 7 standard - officially IEEE 802.11be - was finalized in 2024. "
        "⟨ieee.org/standards/802-11be⟩ Devices certified for it must support 320 MHz channels "
        "- double Wi-Fi 6E. ⟨wi-fi.org/discover-wi-fi/wi-fi-certified-7⟩",
        [
            "The Wi-Fi 7 standard - officially IEEE 802.11be - was finalized in 2024.",
            "Devices certified for it must support 320 MHz channels - double Wi-Fi 6E.",
        ],
    ),
    (
        "ctl-german-number",
        "abbreviation",
        "Die Zahl der Galeria-Filialen sank bis Ende 2024 auf 83. Die Kette will weitere "
        "Häuser schließen. ⟨tagesschau.de/wirtschaft/unternehmen/galeria-filialen⟩",
        ["Die Kette will weitere Häuser schließen."],
    ),
    (
        "ctl-question",
        "offer",
        "Is the Louvre open on Mondays? Yes: it is open every day except Tuesday. "
        "⟨louvre.fr/en/visit/hours⟩",
        ["Yes: it is open every day except Tuesday."],
    ),
    # --- written after the fix, measured once before any further change ---------------------
    (
        "ho-chips",
        "abbreviation",
        "Intel Corp. posted a net loss of $16.6 billion in the third quarter, its largest ever. "
        "⟨intc.com/news-events/press-releases/detail/q3-2024⟩ The U.S. government later took "
        "a roughly 10% stake in the company. ⟨commerce.gov/news/press-releases/2025/08/intel⟩ "
        "AMD Inc. was not part of the deal ⟨reuters.com/technology/intel-stake⟩.",
        [
            "Intel Corp. posted a net loss of $16.6 billion in the third quarter, its largest "
            "ever.",
            "The U.S. government later took a roughly 10% stake in the company.",
            "AMD Inc. was not part of the deal",
        ],
    ),
    (
        "ho-summary",
        "bullet",
        "**TL;DR**\n\n• Ticket prices rose 8% this season ⟨nytimes.com/2025/athletic/ticket-"
        "prices⟩\n• Attendance hit a record 74.4 million (see MLB's release) "
        "⟨mlb.com/news/attendance-2024⟩\n• The average game lasted 2 h 36 min. "
        "⟨espn.com/mlb/story/pitch-clock-game-time⟩\n\nWant me to break this down by team? "
        "⟨baseball-reference.com/leagues/majors/2024-misc.shtml⟩",
        [
            "Ticket prices rose 8% this season",
            ("Attendance hit a record 74.4 million", "parenthetical"),
            "The average game lasted 2 h 36 min.",
            ("The average game lasted 2 h 36 min.", "offer"),
        ],
    ),
    (
        "ho-quote",
        "quote",
        "“The economy is in a good place…” Powell told lawmakers on Tuesday. "
        "⟨federalreserve.gov/newsevents/testimony/powell20250211a.htm⟩ He gave no hint of a "
        "March cut. ⟨cnbc.com/2025/02/11/powell-testimony⟩",
        [
            "“The economy is in a good place…” Powell told lawmakers on Tuesday.",
            ("He gave no hint of a March cut.", "plain"),
        ],
    ),
    (
        "ho-fr",
        "non_ascii",
        "Le Tour de France 2025 s’est achevé le 27 juillet sur les Champs-Élysées. "
        "⟨letour.fr/fr/actualites/arrivee-2025⟩ Tadej Pogačar a remporté son quatrième Tour "
        "⟨lequipe.fr/Cyclisme-sur-route/pogacar-quatrieme⟩ ; Jonas Vingegaard a fini deuxième "
        "⟨francetvinfo.fr/sports/cyclisme/vingegaard⟩.\n\nSi tu veux, je peux te donner le "
        "classement complet. ⟨procyclingstats.com/race/tour-de-france/2025/gc⟩",
        [
            "Le Tour de France 2025 s’est achevé le 27 juillet sur les Champs-Élysées.",
            "Tadej Pogačar a remporté son quatrième Tour",
            "Jonas Vingegaard a fini deuxième",
            ("Jonas Vingegaard a fini deuxième", "offer"),
        ],
    ),
    (
        "ho-de",
        "abbreviation",
        "Der Eurovision Song Contest 2025 fand vom 13. bis 17. Mai in Basel statt. "
        "⟨eurovision.tv/event/basel-2025⟩ Gewonnen hat JJ aus Österreich mit „Wasted Love“. "
        "⟨orf.at/stories/esc-2025-sieg⟩ Deutschland landete u. a. hinter der Schweiz auf "
        "Platz 15 ⟨ndr.de/esc/esc-2025-ergebnis⟩.",
        [
            "Der Eurovision Song Contest 2025 fand vom 13. bis 17. Mai in Basel statt.",
            ("Gewonnen hat JJ aus Österreich mit „Wasted Love“.", "non_ascii"),
            "Deutschland landete u. a. hinter der Schweiz auf Platz 15",
        ],
    ),
    (
        "ho-table",
        "table",
        "| Airport | Passengers (2024) |\n|---|---:|\n| Atlanta (ATL) | 108.1 million "
        "⟨aci.aero/2025/04/world-airport-traffic⟩ |\n| Dubai (DXB) | 92.3 million "
        "⟨dubaiairports.ae/media-centre/2024-traffic⟩ |",
        ["108.1 million", "92.3 million"],
    ),
    (
        "ho-ja",
        "non_ascii",
        "大阪・関西万博は2025年4月13日に開幕しました。⟨expo2025.or.jp/news/opening⟩ "
        "会期は10月13日までの184日間です ⟨nikkei.com/article/expo-kaiki⟩。"
        "よろしければ、パビリオンの予約方法もお調べします。⟨expo2025.or.jp/reservation⟩",
        [
            "大阪・関西万博は2025年4月13日に開幕しました。",
            "会期は10月13日までの184日間です",
            ("会期は10月13日までの184日間です", "offer"),
        ],
    ),
    (
        "ho-dash",
        "bullet",
        "Pros and cons:\n– Pro: 12-hour battery life ⟨notebookcheck.net/macbook-air-m4-review⟩\n"
        "– Con: only two USB-C ports, e.g. no HDMI ⟨theverge.com/macbook-air-m4-review⟩",
        ["Pro: 12-hour battery life", "Con: only two USB-C ports, e.g. no HDMI"],
    ),
    # --- mixed answers (class per link) -------------------------------------------------------
    (
        "gpt5-answer",
        "plain",
        "**Short answer:** The Louvre is closed on Tuesdays. ⟨louvre.fr/en/visit/hours⟩\n\n"
        "**Details**\n\n"
        "- **Hours:** 9 a.m. to 6 p.m., with late openings until 9:45 p.m. on Wednesdays and "
        "Fridays. ⟨louvre.fr/en/visit/hours⟩\n"
        "- **Tickets:** €22 online; free for visitors under 18 (e.g. school groups). "
        "⟨louvre.fr/en/visit/tickets⟩\n"
        "- **New entrance:** A second entrance is planned by 2031 (see Le Monde). "
        "⟨lemonde.fr/culture/article/2025/01/28/louvre-nouvelle-entree⟩\n\n"
        "If you want, I can check this week's exact hours for you. ⟨louvre.fr/en/visit⟩",
        [
            "**Short answer:** The Louvre is closed on Tuesdays.",
            (
                "**Hours:** 9 a.m. to 6 p.m., with late openings until 9:45 p.m. on Wednesdays "
                "and Fridays.",
                "bullet",
            ),
            ("**Tickets:** €22 online; free for visitors under 18 (e.g. school groups).", "bullet"),
            ("**New entrance:** A second entrance is planned by 2031", "parenthetical"),
            ("**New entrance:** A second entrance is planned by 2031", "offer"),
        ],
    ),
    (
        "news-roundup",
        "plain",
        "Here's what happened today:\n\n"
        "1. **Markets:** The S&P 500 closed at a record 6,144 points. "
        "⟨cnbc.com/2025/06/27/stock-market-today⟩\n"
        "2. **Tech:** Apple Inc. said WWDC keynotes drew 2.5 million live viewers. "
        "⟨9to5mac.com/2025/06/wwdc-viewers⟩\n"
        "3. **Weather:** A heat dome is forecast over the U.S. Midwest through Sunday "
        "⟨weather.gov/news/heat-dome⟩.\n\n"
        "Would you like more detail on any of these? ⟨apnews.com/hub/business⟩",
        [
            ("**Markets:** The S&P 500 closed at a record 6,144 points.", "numbered"),
            ("**Tech:** Apple Inc. said WWDC keynotes drew 2.5 million live viewers.", "numbered"),
            (
                "**Weather:** A heat dome is forecast over the U.S. Midwest through Sunday",
                "numbered",
            ),
            ("**Weather:** A heat dome is forecast over the U.S. Midwest through Sunday", "offer"),
        ],
    ),
    (
        "trip-fr",
        "non_ascii",
        "## Week-end à Lyon\n\n"
        "La basilique Notre-Dame de Fourvière domine la ville depuis 1896. "
        "⟨fourviere.org/fr/histoire⟩ Le Vieux-Lyon est classé à l’UNESCO depuis 1998 "
        "⟨whc.unesco.org/fr/list/872⟩.\n\n"
        "- Les Halles Paul Bocuse ouvrent dès 7 h du mardi au samedi. "
        "⟨halles-de-lyon-paulbocuse.com/horaires⟩\n"
        "- La Fête des Lumières a lieu chaque année autour du 8 décembre. "
        "⟨fetedeslumieres.lyon.fr⟩",
        [
            "La basilique Notre-Dame de Fourvière domine la ville depuis 1896.",
            "Le Vieux-Lyon est classé à l’UNESCO depuis 1998",
            ("Les Halles Paul Bocuse ouvrent dès 7 h du mardi au samedi.", "bullet"),
            ("La Fête des Lumières a lieu chaque année autour du 8 décembre.", "bullet"),
        ],
    ),
    (
        "ev-de",
        "abbreviation",
        "Laut KBA wurden 2024 in Deutschland rund 380.600 E-Autos neu zugelassen, d. h. ca. 27 % "
        "weniger als im Vorjahr. ⟨kba.de/DE/Presse/Pressemitteilungen/Fahrzeugzulassungen/2025/"
        "pm01_2025⟩ Tesla verlor dabei u. a. gegenüber VW an Boden. ⟨handelsblatt.com/unternehmen/"
        "tesla-vw-2024⟩",
        [
            "Laut KBA wurden 2024 in Deutschland rund 380.600 E-Autos neu zugelassen, d. h. ca. "
            "27 % weniger als im Vorjahr.",
            "Tesla verlor dabei u. a. gegenüber VW an Boden.",
        ],
    ),
    (
        "sponsor",
        "abbreviation",
        "Coca-Cola Co. has sponsored the Olympics since 1928. ⟨coca-colacompany.com/about-us/"
        "olympics⟩ Procter & Gamble Co. ended its sponsorship after Paris 2024. "
        "⟨sportbusiness.com/news/pg-olympics⟩",
        [
            "Coca-Cola Co. has sponsored the Olympics since 1928.",
            "Procter & Gamble Co. ended its sponsorship after Paris 2024.",
        ],
    ),
    (
        "vs-case",
        "abbreviation",
        "In Loper Bright Enterprises v. Raimondo, the Supreme Court overruled Chevron deference. "
        "⟨supremecourt.gov/opinions/23pdf/22-451_7m58.pdf⟩ Brown v. Board of Education was "
        "decided 70 years earlier ⟨archives.gov/milestone-documents/brown-v-board-of-education⟩.",
        [
            "In Loper Bright Enterprises v. Raimondo, the Supreme Court overruled Chevron "
            "deference.",
            "Brown v. Board of Education was decided 70 years earlier",
        ],
    ),
    (
        "ltd",
        "abbreviation",
        "Arm Holdings Ltd. was acquired by SoftBank in 2016 for £24.3 billion. "
        "⟨group.softbank/en/news/press/20160718⟩ Arm listed on Nasdaq in Sept. 2023. "
        "⟨reuters.com/markets/deals/arm-ipo-2023-09-14⟩",
        [
            "Arm Holdings Ltd. was acquired by SoftBank in 2016 for £24.3 billion.",
            "Arm listed on Nasdaq in Sept. 2023.",
        ],
    ),
    (
        "mt",
        "abbreviation",
        "Mt. Fuji's climbing season runs from early July to Sept. 10. "
        "⟨fujisan-climb.jp/en/season⟩ Climbers on the Yoshida Trail must pay a ¥4,000 fee. "
        "⟨japantimes.co.jp/news/2025/mt-fuji-fee⟩",
        [
            "Mt. Fuji's climbing season runs from early July to Sept. 10.",
            "Climbers on the Yoshida Trail must pay a ¥4,000 fee.",
        ],
    ),
    (
        "pct",
        "plain",
        "Unemployment in the euro area was 6.2% in May. ⟨ec.europa.eu/eurostat/news/euro-"
        "indicators⟩ Spain had the highest rate, at 10.8%. ⟨ine.es/en/prensa/epa_prensa⟩ "
        "Germany's rate was 3.6% ⟨destatis.de/EN/Themes/Labour⟩.",
        [
            "Unemployment in the euro area was 6.2% in May.",
            "Spain had the highest rate, at 10.8%.",
            "Germany's rate was 3.6%",
        ],
    ),
    (
        "colon-lead",
        "plain",
        "Bottom line: the Switch 2 costs $449.99 in the US. ⟨nintendo.com/us/gaming-systems/"
        "switch-2⟩ A bundle with Mario Kart World costs $499.99. ⟨polygon.com/switch-2-price⟩",
        [
            "Bottom line: the Switch 2 costs $449.99 in the US.",
            "A bundle with Mario Kart World costs $499.99.",
        ],
    ),
]


def expand(text: str) -> tuple[str, list[tuple[int, int]]]:
    """The text with its links written out, and each link annotation's range."""
    out: list[str] = []
    spans: list[tuple[int, int]] = []
    pos = 0
    length = 0
    for m in _LINK_RE.finditer(text):
        out.append(text[pos : m.start()])
        length += m.start() - pos
        pos = m.end()
        kind, target = m.group(1), m.group(2)
        domain = target.split("/", 1)[0]
        sep = "&" if "?" in target else "?"
        url = f"https://{target}{sep}utm_source=openai"
        inner = f"[{domain.removeprefix('www.')}]({url})"
        if kind == "!":
            link, a, b = inner, 0, len(inner)
        elif kind == "^":
            link, a, b = f"({inner})", 1, len(inner) + 1
        else:
            link, a, b = f"({inner})", 0, len(inner) + 2
        out.append(link)
        spans.append((length + a, length + b))
        length += len(link)
    out.append(text[pos:])
    return "".join(out), spans


def rows() -> list[dict[str, object]]:
    """Every labelled link of `DOCS`."""
    got: list[dict[str, object]] = []
    seen: set[str] = set()
    for prefix, default, source, labels in DOCS:
        if prefix in seen:
            raise ValueError(f"duplicate document id {prefix}")
        seen.add(prefix)
        text, spans = expand(source)
        if len(spans) != len(labels):
            raise ValueError(f"{prefix}: {len(spans)} links, {len(labels)} labels")
        for n, ((start, end), label) in enumerate(zip(spans, labels, strict=True), 1):
            if label is None:
                continue
            claim, cls = (label, default) if isinstance(label, str) else label
            hits = [m.start() for m in re.finditer(re.escape(claim), text)]
            if not hits:
                raise ValueError(f"{prefix}#{n}: claim not in text: {claim!r}")
            before = [h for h in hits if h + len(claim) <= start]
            at = before[-1] if before else min(h for h in hits if h >= end)
            row: dict[str, object] = {
                "id": f"{prefix}-{n}",
                "text": text,
                "start": start,
                "end": end,
                "claim": claim,
                "class": cls,
            }
            if len(hits) > 1:
                row["claim_start"] = at
            got.append(row)
    return got


def main() -> int:
    data = rows()
    with OUT.open("w", encoding="utf-8") as fh:
        for row in data:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(data)} link citations written to {OUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
