"""Import paraphrase pairs into a campaign: readers -> formats -> validation -> one transaction.

Public interface (used by ``manage.py import_pairs``, ``load_demo`` and the REST API)::

    import_file(campaign, path_or_file, format="auto", max_length=None, origin="", options=...) -> ImportReport
    import_records(campaign, records, format_name="records", max_length=None, origin="", options=...)

``ImportOptions`` (annotate.importers.options) says where the gold labels are: a gold column, a
value mapping, or one constant label for the file; and whether an ignored label-like column
is a warning or (``strict``) a refusal.

Both refuse invalid input with :class:`ImportRefused`, whose ``problems`` name the line (or
record) and the reason; nothing is stored then.
"""

from annotate.importers.formats import FORMAT_CHOICES
from annotate.importers.options import ImportOptionError, ImportOptions
from annotate.importers.pipeline import import_file, import_records
from annotate.importers.problems import ImportProblem, ImportRefused, ImportReport

__all__ = [
    "FORMAT_CHOICES",
    "ImportOptionError",
    "ImportOptions",
    "ImportProblem",
    "ImportRefused",
    "ImportReport",
    "import_file",
    "import_records",
]
