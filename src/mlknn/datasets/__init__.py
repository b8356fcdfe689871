"""Multi-label benchmark datasets (MULAN / MEKA ARFF) and synthetic data.

The benchmark files live outside the package, in the folder named by the
``MLKNN_DATA`` environment variable (or the ``data_home`` argument), which
holds ``MANIFEST.tsv`` and one sub-folder per dataset.

Public API
----------
load
    A dataset by MANIFEST name (``load("emotions")``, ``split="train"``) or
    any ARFF file by path (``.txt`` / ``.svm`` / ``.libsvm``: :func:`load_xc`).
load_arff
    One ARFF file, with explicit control over where the labels are.
load_csv
    A CSV / TSV table with a header row, the label columns given by name or count.
save_arff
    Write X and Y as MULAN ARFF (+ XML) or MEKA ARFF.
load_xc
    An Extreme Classification Repository or LIBSVM multi-label text file
    (CSR X float32, CSR Y uint8; see :mod:`mlknn.datasets._xc`).
list_datasets
    The MANIFEST rows as dicts.
dataset_stats, label_stats
    n, d, q, label cardinality / density / diversity; per-label counts.
make_simulated_2d, make_multilabel, make_extreme_multilabel
    Synthetic data (Younes et al. 2011's 2-D set; scikit-learn's generator;
    a power-law label space with embedding features).
DatasetFormatError
    Raised for malformed files (subclass of ValueError).
data_home
    The resolved dataset folder.
fetch, fetchable_datasets, FetchError, ChecksumError
    Download a dataset of the standard collection, pinned by SHA-256, into
    ``$MLKNN_DATA`` or the user cache (see :mod:`mlknn.datasets._fetch`).

Label conventions
-----------------
* MULAN files: the labels are the attributes named in the ``.xml`` file
  beside the ARFF, matched by name after removing ARFF backslash escapes on
  both sides. A ``-C q`` in a MULAN ``@relation`` is ignored (it is wrong for
  ``medical`` and ``llog``).
* MEKA files: ``-C q`` in the ``@relation`` name; q > 0 means the first q
  attributes, q < 0 the last ``|q|``.
* The columns of ``Y`` follow the ARFF attribute order (not the XML order,
  which differs for yeast and enron); ``label_names`` gives that order.
* Names are returned with ARFF backslash escapes removed
  (``TAG_m'usica``).
"""

from ._arff import DatasetFormatError
from ._csv import load_csv
from ._fetch import ChecksumError, FetchError, fetch, fetchable_datasets
from ._load import XC_SUFFIXES, list_datasets, load
from ._manifest import data_home
from ._read import READ_FORMATS, load_arff
from ._stats import dataset_stats, label_stats
from ._synthetic import make_extreme_multilabel, make_multilabel, make_simulated_2d
from ._write import save_arff
from ._xc import load_xc

__all__ = [
    "load",
    "load_arff",
    "load_csv",
    "save_arff",
    "list_datasets",
    "dataset_stats",
    "label_stats",
    "make_simulated_2d",
    "make_multilabel",
    "make_extreme_multilabel",
    "load_xc",
    "DatasetFormatError",
    "data_home",
    "fetch",
    "fetchable_datasets",
    "FetchError",
    "ChecksumError",
    "READ_FORMATS",
    "XC_SUFFIXES",
]

# For mlknn's other packages, not in __all__ (no public promise): the CLI looks a name up
# in the pinned table of fetchable datasets, and the report names an ARFF path by its stem.
from ._arff import arff_stem as arff_stem
from ._pinned import pinned_dataset as pinned_dataset
