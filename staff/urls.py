"""Every staff page, mounted at ``/staff/`` by ``paraeval.urls`` (namespace ``staff``)."""

from django.urls import path

from staff.views import bring, campaigns, dashboard, exports, pairs, probes, site, status, tuning, uploads, volunteers

app_name = "staff"

urlpatterns = [
    path("", site.staff_home, name="home"),
    # Campaign set-up: a new campaign, its settings, a clone, its definition file.
    path("campaigns/new/", campaigns.new_campaign, name="campaign-new"),
    path("campaigns/new/from-definition/", campaigns.import_definition, name="campaign-load"),
    path("campaigns/<slug:slug>/settings/", campaigns.settings_page, name="campaign-settings"),
    path("campaigns/<slug:slug>/clone/", campaigns.clone, name="campaign-clone"),
    path("campaigns/<slug:slug>/stopping/", campaigns.stopping_rule, name="campaign-stopping"),
    path("campaigns/<slug:slug>/definition.json", campaigns.definition_file, name="campaign-definition"),
    # Pair files: upload, preview and mapping, dry run, import.
    path("campaigns/<slug:slug>/upload/", uploads.upload, name="upload"),
    path("campaigns/<slug:slug>/upload/<int:upload_id>/", uploads.detail, name="upload-detail"),
    path("campaigns/<slug:slug>/upload/<int:upload_id>/status.json", uploads.status, name="upload-status"),
    path("campaigns/<slug:slug>/upload/<int:upload_id>/<str:mode>/", uploads.start, name="upload-start"),
    # Volunteers: judge quality, overrides, crowd-platform participants.
    path("campaigns/<slug:slug>/volunteers/", volunteers.volunteers, name="volunteers"),
    path("campaigns/<slug:slug>/participants.csv", volunteers.participants_csv, name="participants-csv"),
    # Pairs with every judgement and score, searchable.
    path("campaigns/<slug:slug>/pairs/", pairs.pair_list, name="pairs"),
    path("campaigns/<slug:slug>/pairs/<int:pair_id>/", pairs.pair_page, name="pair"),
    # The probe set built from the campaign's pairs: robustness cards and samples.
    path("campaigns/<slug:slug>/probes/", probes.probe_set_page, name="probes"),
    # Exports.
    path("export/", site.exports, name="exports"),
    path("export/<slug:slug>/", exports.campaign_export, name="campaign-export"),
    # The agreement dashboard and the scoring workers' status.
    path("dashboard/", dashboard.dashboard, name="dashboard"),
    path("dashboard/data/", dashboard.dashboard_data, name="dashboard-data"),
    path("status/", status.status_page, name="status"),
    path("status.json", status.status_json, name="status-json"),
    # The researcher's own metric and generators.
    path("scores/import/", bring.score_import, name="score-import"),
    path("generate/", bring.generate, name="generate"),
    # Steps that needed a shell: tune a judge, set the PARAPHRASUS objective of each corpus.
    path("tuning/", tuning.tune_judge, name="tuning"),
    path("campaigns/<slug:slug>/objectives/", tuning.corpus_objectives, name="objectives"),
]
