"""The pinned collection of :func:`mlknn.datasets.fetch`: every dataset's files, their
SHA-256, sizes and sources (owner/repo:path@commit), parsed into a registry."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping
from dataclasses import dataclass

# --------------------------------------------------------------------------
# The pinned collection
# --------------------------------------------------------------------------

# MANIFEST.tsv of the shared benchmark folder, verbatim: names, statistics,
# the SHA-256 of every file as stored there and its source
# (owner/repo:path@commit, plus a decompression note).
_PINNED_MANIFEST = """\
name	files	format	label_location	n	d	q	lcard	ldens	ldiv	sparse	sha256	source
emotions	emotions.arff;emotions-train.arff;emotions-test.arff;emotions.xml;README.md	mulan	xml	593	72	6	1.868	0.311	27	no	6f2f790047073d1293ac0872c0d55f2dc98b6177802fc96c6b66b309dfee1e4b;bbe704106c79bb8fb99c1d1d2e9bde081d6a2daeb01f100862f11fd91a3c1f98;f13d4b746b7b5c8eb484bd751d6ac463d4560dff998a93516a5c1fe35daf6c8f;dbce8e6ccbbb2fcbfd9e9edbb230d7ed12692c6e13f59fdbc0161fa9b6cf2dc0;2986546dd8dacd62980daa6451cc2608834951e04b9add560ba26ce77dd418ff	tsoumakas/mulan:data/multi-label/emotions/emotions.arff@43f6389095ad71984264db4387a8074b22bc7d4a;tsoumakas/mulan:data/multi-label/emotions/emotions-train.arff@43f6389095ad71984264db4387a8074b22bc7d4a;tsoumakas/mulan:data/multi-label/emotions/emotions-test.arff@43f6389095ad71984264db4387a8074b22bc7d4a;tsoumakas/mulan:data/multi-label/emotions/emotions.xml@43f6389095ad71984264db4387a8074b22bc7d4a;tsoumakas/mulan:data/multi-label/emotions/README.md@43f6389095ad71984264db4387a8074b22bc7d4a
scene	scene-train.arff;scene-test.arff;scene.xml	mulan	xml	2407	294	6	1.074	0.179	15	no	b53ba93bdf412de922e3960389bcee24744fa3e872ce610511fc1d750888b64d;ea38d20296b3ff7e220f477a3b802a9bcb2d768881fe6ee163efbc97ea527a42;55d8b247b949ad5c52e5a73d8c6775ec6e5469ce9682465b45b333b68ee4bcc5	tsoumakas/mulan:data/multi-label/scene/scene-train.arff@43f6389095ad71984264db4387a8074b22bc7d4a;tsoumakas/mulan:data/multi-label/scene/scene-test.arff@43f6389095ad71984264db4387a8074b22bc7d4a;tsoumakas/mulan:data/multi-label/scene/scene.xml@43f6389095ad71984264db4387a8074b22bc7d4a
yeast	yeast.arff;yeast-train.arff;yeast-test.arff;yeast.xml	mulan	xml	2417	103	14	4.237	0.303	198	no	55c07a3b6ff885ae338fb6987a1d57f55572b29809922c2822c4885c61230dd7;e759dc991ff54694a4ff9c4314f3be0d6fd2b1994a4b563f57e416394c6aebbd;4aaac102bff9669a765bf0b378602e5cc8c3b181048282e2f003117b496d552a;c3056cc26444b5158b1588d1b73bec9c45429e10f0957ad085903423cb81f247	tsoumakas/mulan:data/multi-label/yeast/yeast.arff@43f6389095ad71984264db4387a8074b22bc7d4a;tsoumakas/mulan:data/multi-label/yeast/yeast-train.arff@43f6389095ad71984264db4387a8074b22bc7d4a;tsoumakas/mulan:data/multi-label/yeast/yeast-test.arff@43f6389095ad71984264db4387a8074b22bc7d4a;tsoumakas/mulan:data/multi-label/yeast/yeast.xml@43f6389095ad71984264db4387a8074b22bc7d4a
medical	medical.arff;medical-train.arff;medical-test.arff;medical.xml	mulan	xml	978	1449	45	1.245	0.028	94	yes	ad0630a9a409ed0023c3bb56a0be7610b635c1ca185c6035e3b198b01167aac4;c764f45756ab1c553b8b4eaaf5605a5610a43bbbcf37492d0f1a12bf9c9e2244;6be472e75a6c0b0916187f343a398011b1b26f8f0ddc682c575312ad3532f6c4;51fa9d5c09e48caff3f0a0c75db1c9aa85944f8e35451f3ad8bd56fc422286ce	tsoumakas/mulan:data/multi-label/medical/medical.arff@43f6389095ad71984264db4387a8074b22bc7d4a;tsoumakas/mulan:data/multi-label/medical/medical-train.arff@43f6389095ad71984264db4387a8074b22bc7d4a;tsoumakas/mulan:data/multi-label/medical/medical-test.arff@43f6389095ad71984264db4387a8074b22bc7d4a;tsoumakas/mulan:data/multi-label/medical/medical.xml@43f6389095ad71984264db4387a8074b22bc7d4a
enron	enron.arff;enron-train.arff;enron-test.arff;enron.xml;README.md;categories.txt	mulan	xml	1702	1001	53	3.378	0.064	753	yes	d0889ef0576d4e7b5ec0df3b3e4760e476ac11a6e7d7ddeee4c4a34470dedf97;2988cefc1cdf7a8004a20ef84615cc8fa1b5d7434c16687283b41454e2d9d194;2f3aad54a8f54caaab4ab01246fe9dd385ba944a2633028f52747b57eac5474e;ed40c92d7f613eed51714912cab10dddc4ce456262137d8fef230d44c7f4457b;9be9344adc3ed826fa6baf7f34f41a6fdd3216bc5390b9b044bc64e48bccffbd;55ed4182b82c7495e9b2a283cf812f6c1f3792de6bd09902d5361bf2472fe975	tsoumakas/mulan:data/multi-label/enron/enron.arff@43f6389095ad71984264db4387a8074b22bc7d4a;tsoumakas/mulan:data/multi-label/enron/enron-train.arff@43f6389095ad71984264db4387a8074b22bc7d4a;tsoumakas/mulan:data/multi-label/enron/enron-test.arff@43f6389095ad71984264db4387a8074b22bc7d4a;tsoumakas/mulan:data/multi-label/enron/enron.xml@43f6389095ad71984264db4387a8074b22bc7d4a;tsoumakas/mulan:data/multi-label/enron/README.md@43f6389095ad71984264db4387a8074b22bc7d4a;tsoumakas/mulan:data/multi-label/enron/categories.txt@43f6389095ad71984264db4387a8074b22bc7d4a
corel5k	Corel5k-sparse.arff;Corel5k-train-sparse.arff;Corel5k-test-sparse.arff;Corel5k.xml;README.md	mulan	xml	5000	499	374	3.522	0.009	3175	yes	12c06161d2367f919f6da912089a6c9180c115cfcefa37afacfdeb903930eb7e;19eb253c447144bea74ffa86b4731a56022addae2ba7d0aab72ad07fdc02e9b3;e8f8e9cd052c43ba7bdfdf99d242f461fc8c2a03163466d921e576887b51d8a7;54ef6a6ccb7ca9b77524052b34b306d5d501661a5609b9d1cc7085b2b597679d;f852b3d7bc31b660604f0cfa461afa60a9f1298e6f79add961a0603ac4a9680d	tsoumakas/mulan:data/multi-label/corel5k/Corel5k-sparse.arff@43f6389095ad71984264db4387a8074b22bc7d4a;tsoumakas/mulan:data/multi-label/corel5k/Corel5k-train-sparse.arff@43f6389095ad71984264db4387a8074b22bc7d4a;tsoumakas/mulan:data/multi-label/corel5k/Corel5k-test-sparse.arff@43f6389095ad71984264db4387a8074b22bc7d4a;tsoumakas/mulan:data/multi-label/corel5k/Corel5k.xml@43f6389095ad71984264db4387a8074b22bc7d4a;tsoumakas/mulan:data/multi-label/corel5k/README.md@43f6389095ad71984264db4387a8074b22bc7d4a
bibtex	bibtex.arff;bibtex-train.arff;bibtex-test.arff;bibtex.xml;README.md	mulan	xml	7395	1836	159	2.402	0.015	2856	yes	a282a6d1fb3cdaf39bde3f81cd4e6079850a7a538a6bc44f8b4ed95dfe1e5014;8dcc9de6e0b2cebaec8c1f4fac78431adeeb73cfd3ab879b530a66d366e59174;9b03329cde64d3f994bdf7fbbac3f3b10fe185c311cb9ae725475f59c7f3f922;08fe20013c1e75dcf1888c185f5187c95e76495b8518ce289b4d3afce38d1232;796eaaa1cb7239ec95d71731f47dff19c12afe8e82ea2e10256e22663e744871	tsoumakas/mulan:data/multi-label/bibtex/bibtex.arff@43f6389095ad71984264db4387a8074b22bc7d4a;tsoumakas/mulan:data/multi-label/bibtex/bibtex-train.arff@43f6389095ad71984264db4387a8074b22bc7d4a;tsoumakas/mulan:data/multi-label/bibtex/bibtex-test.arff@43f6389095ad71984264db4387a8074b22bc7d4a;tsoumakas/mulan:data/multi-label/bibtex/bibtex.xml@43f6389095ad71984264db4387a8074b22bc7d4a;tsoumakas/mulan:data/multi-label/bibtex/README.md@43f6389095ad71984264db4387a8074b22bc7d4a
llog	llog.arff;llog.xml	mulan	xml	1460	1004	75	1.180	0.016	304	yes	c680833ef5163d67a6a13c06c277420abb125c164a30b0fcf874383324d3cf95;5110d363b6d047c96ca27769d7f033cd8c195e9701e7107e1071d4b7ae51195b	mrapp-ke/Boomer:data/llog.arff@8882de70751e900adad7b962525366f322301dc4;mrapp-ke/Boomer:data/llog.xml@8882de70751e900adad7b962525366f322301dc4
tmc2007-500	tmc2007-500.arff;tmc2007-500-train.arff;tmc2007-500-test.arff;tmc2007-500.xml	mulan	xml	28596	500	22	2.158	0.098	1341	yes	3ea7e95dd80a78a3e7d521d77c3371bfef888da1d364b5a3bb71c7222ad7f013;edfe7b7615c6f80e54c92a214437610d1ae36560c5cc6c4253b51c434d258273;b24f9c3f1eba77c9da0bbaff093ba41d331b7351be0167a8e1e3852c62e25e38;cb6a67c8ae72fd9b47d89f77aa5b7f6cafb4ba9c20b1124c65a95a3f2caec38d	tsoumakas/mulan:data/multi-label/tmc2007/tmc2007-500.arff@43f6389095ad71984264db4387a8074b22bc7d4a;tsoumakas/mulan:data/multi-label/tmc2007/tmc2007-500-train.arff@43f6389095ad71984264db4387a8074b22bc7d4a;tsoumakas/mulan:data/multi-label/tmc2007/tmc2007-500-test.arff@43f6389095ad71984264db4387a8074b22bc7d4a;tsoumakas/mulan:data/multi-label/tmc2007/tmc2007-500.xml@43f6389095ad71984264db4387a8074b22bc7d4a
delicious	delicious.arff;delicious-train.arff;delicious-test.arff;delicious.xml;README.md	mulan	xml	16105	500	983	19.020	0.019	15806	yes	b944de0bca910050c11d97eed57d17b073110ea3646a587f3d15d127cf581aab;030186cdb542ebdd32052fcdbb1ebe30115b3a22518c1b4b198c45eb827aebe1;2dfb01723a819914b0ca83361177ed413ce3f2169851d9f228d4692915d63944;4e0c0f93c7d86a39b9fca4aaefaa00e9428f2c80277732dfbf03ca48e2c14da2;28482dfccc803d24919f802fcfda30822c25c8c9e7ff29407c6c96cddcd3d11a	tsoumakas/mulan:data/multi-label/delicious/delicious.arff@43f6389095ad71984264db4387a8074b22bc7d4a;tsoumakas/mulan:data/multi-label/delicious/delicious-train.arff@43f6389095ad71984264db4387a8074b22bc7d4a;tsoumakas/mulan:data/multi-label/delicious/delicious-test.arff@43f6389095ad71984264db4387a8074b22bc7d4a;tsoumakas/mulan:data/multi-label/delicious/delicious.xml@43f6389095ad71984264db4387a8074b22bc7d4a;tsoumakas/mulan:data/multi-label/delicious/README.md@43f6389095ad71984264db4387a8074b22bc7d4a
imdb	Imdb.arff.gz	meka	first 28	120919	1001	28	2.000	0.071	4503	yes	332edeffdb686e8dbf29a5e2e1a1ea003a6141ec9929bb3927183c1da6b788f2	Waikato/meka:src/main/data/Imdb.arff.bz2@f9ffe231e06ebaa75b4a95c5cdeb737419731621 (bunzip2+gzip)
emotions-meka	Music.arff	meka	first 6	592	71	6	1.870	0.312	27	no	276be786e33b2ec11b91147483aa5758d8df6eb8b55f8ac82e5e0b231f0270b5	Waikato/meka:src/main/data/Music.arff@f9ffe231e06ebaa75b4a95c5cdeb737419731621
scene-meka	Scene.arff.gz	meka	first 6	2407	294	6	1.074	0.179	15	no	62ef14b7f447d7b970cc22ccdcb0046c62b4bbac14e974100def46364ce12b12	Waikato/meka:src/main/data/Scene.arff.bz2@f9ffe231e06ebaa75b4a95c5cdeb737419731621 (bunzip2+gzip)
yeast-meka	Yeast.arff	meka	first 14	2417	103	14	4.237	0.303	198	no	71ffb9a0992d01b3387ef72203f44fb006e51ff79ca00c3ed57bb5e04d154d6d	Waikato/meka:src/main/data/Yeast.arff.bz2@f9ffe231e06ebaa75b4a95c5cdeb737419731621 (bunzip2)
enron-meka	Enron.arff	meka	first 53	1702	1001	53	3.378	0.064	753	yes	3e4704c5e683aa854f27e1f334ed28a62dd80ffc8b4afa41330187739646fd9d	Waikato/meka:src/main/data/Enron.arff.bz2@f9ffe231e06ebaa75b4a95c5cdeb737419731621 (bunzip2)
"""

# Size in bytes of every file as stored (for (bunzip2+gzip) files: of the
# decompressed ARFF), and for (bunzip2+gzip) files the SHA-256 of the
# decompressed ARFF, the pin that can be checked after decompression.
_SIZES = {
    "emotions/emotions.arff": 380476,
    "emotions/emotions-train.arff": 252080,
    "emotions/emotions-test.arff": 132007,
    "emotions/emotions.xml": 323,
    "emotions/README.md": 918,
    "scene/scene-train.arff": 3127968,
    "scene/scene-test.arff": 3090742,
    "scene/scene.xml": 285,
    "yeast/yeast.arff": 2416688,
    "yeast/yeast-train.arff": 1501117,
    "yeast/yeast-test.arff": 918515,
    "yeast/yeast.xml": 526,
    "medical/medical.arff": 129626,
    "medical/medical-train.arff": 69680,
    "medical/medical-test.arff": 99124,
    "medical/medical.xml": 1818,
    "enron/enron.arff": 906705,
    "enron/enron-train.arff": 607799,
    "enron/enron-test.arff": 324140,
    "enron/enron.xml": 1604,
    "enron/README.md": 559,
    "enron/categories.txt": 1866,
    "corel5k/Corel5k-sparse.arff": 377579,
    "corel5k/Corel5k-train-sparse.arff": 339535,
    "corel5k/Corel5k-test-sparse.arff": 60876,
    "corel5k/Corel5k.xml": 11222,
    "corel5k/README.md": 1052,
    "bibtex/bibtex.arff": 3457832,
    "bibtex/bibtex-train.arff": 2292961,
    "bibtex/bibtex-test.arff": 1215637,
    "bibtex/bibtex.xml": 5880,
    "bibtex/README.md": 665,
    "llog/llog.arff": 1655263,
    "llog/llog.xml": 2957,
    "tmc2007-500/tmc2007-500.arff": 4193699,
    "tmc2007-500/tmc2007-500-train.arff": 3152791,
    "tmc2007-500/tmc2007-500-test.arff": 1054414,
    "tmc2007-500/tmc2007-500.xml": 783,
    "delicious/delicious.arff": 3773732,
    "delicious/delicious-train.arff": 3056590,
    "delicious/delicious-test.arff": 757565,
    "delicious/delicious.xml": 34303,
    "delicious/README.md": 758,
    "imdb/Imdb.arff.gz": 15406138,
    "emotions-meka/Music.arff": 382468,
    "scene-meka/Scene.arff.gz": 6210992,
    "yeast-meka/Yeast.arff": 2416708,
    "enron-meka/Enron.arff": 913709,
}
_CONTENT_SHA256 = {
    "imdb/Imdb.arff.gz": "ba63a84e89ef7d449d6f57eef9c9b097ef5182e6aca5373fd8ba0f5210334ae8",
    "scene-meka/Scene.arff.gz": "39282e8ce59ae7b544bd87cd94cdce8f398e94d3dd5cf44b8d4a81492ae894fa",
}


@dataclass(frozen=True)
class PinnedFile:
    """One file of a dataset: where it comes from and what it must hash to."""

    name: str  # file name inside the dataset folder
    sha256: str  # of the file as stored, or of the decompressed content for +gzip
    source: str  # owner/repo:path@commit [(note)]
    size: int  # bytes of the stored file (decompressed content for +gzip)

    @property
    def transform(self) -> str | None:
        """None, 'bunzip2' or 'bunzip2+gzip'."""
        m = re.search(r"\((bunzip2(?:\+gzip)?)\)\s*$", self.source)
        return m.group(1) if m else None


@dataclass(frozen=True)
class PinnedDataset:
    name: str
    files: tuple[PinnedFile, ...]
    row: dict[str, str]  # the MANIFEST.tsv row (all columns), written after a fetch


def _parse_pinned(
    text: str, sizes: Mapping[str, int], content_sha: Mapping[str, str]
) -> tuple[dict[str, PinnedDataset], list[str]]:
    reader = csv.DictReader(io.StringIO(text), delimiter="\t", quoting=csv.QUOTE_NONE)
    registry: dict[str, PinnedDataset] = {}
    for row in reader:
        names = row["files"].split(";")
        shas = row["sha256"].split(";")
        sources = row["source"].split(";")
        files: list[PinnedFile] = []
        for fname, sha, src in zip(names, shas, sources):
            key = f"{row['name']}/{fname}"
            files.append(PinnedFile(fname, content_sha.get(key, sha), src, sizes[key]))
        registry[row["name"]] = PinnedDataset(row["name"], tuple(files), dict(row))
    # The header row is read by the loop above, so the field names are known.
    assert reader.fieldnames is not None
    return registry, list(reader.fieldnames)


_REGISTRY, _COLUMNS = _parse_pinned(_PINNED_MANIFEST, _SIZES, _CONTENT_SHA256)


def fetchable_datasets() -> list[str]:
    """Names that :func:`fetch` knows, in MANIFEST order.

    Returns
    -------
    names : list of str
        The dataset names :func:`fetch` can download.

    See Also
    --------
    fetch : Download one of these datasets.
    list_datasets : The datasets already in a data folder.

    Examples
    --------
    >>> from mlknn.datasets import fetchable_datasets
    >>> "emotions" in fetchable_datasets()
    True
    """
    return list(_REGISTRY)


def pinned_dataset(name: object) -> PinnedDataset:
    """The pinned dataset called ``name`` (case-insensitive).

    Raises
    ------
    ValueError
        Unknown name; the message lists the known ones.
    """
    entry = _REGISTRY.get(str(name))
    if entry is None:
        by_lower = {k.lower(): v for k, v in _REGISTRY.items()}
        entry = by_lower.get(str(name).lower())
    if entry is None:
        raise ValueError(f"unknown dataset {name!r} for fetch; known: {', '.join(_REGISTRY)}")
    return entry
