"""Import paraphrase pairs into a campaign: readers -> formats -> validation -> one transaction.

Public interface (used by ``manage.py import_pairs``, ``load_demo`` and the REST API)::

    import_file(campaign, path_or_file, format="auto", max_length=None, origin="") -> ImportReport
    import_records(campaign, records, format_name="records", max_length=None, origin="") -> ImportReport

Both refuse invalid input with :class:`ImportRefused`, whose ``problems`` name the line (or
record) and the reason; nothing is stored then.
"""

from annotate.importers.formats import FORMAT_CHOICES
from annotate.importers.pipeline import import_file, import_records
from annotate.importers.problems import ImportProblem, ImportRefused, ImportReport

__all__ = ["FORMAT_CHOICES", "ImportProblem", "ImportRefused", "ImportReport", "import_file", "import_records"]
