"""The volunteer flow: the campaign link, the guidelines, and the volunteer's own pages."""

from django.urls import path

from annotate import campaign_views, staff, upload_views, views

app_name = "annotate"

urlpatterns = [
    path("c/<slug:slug>/", views.welcome, name="welcome"),
    path("c/<slug:slug>/guidelines/", views.guidelines, name="guidelines"),
    path("v/<str:token>/", views.pair, name="pair"),
    path("v/<str:token>/guidelines/", views.introduction, name="introduction"),
    path("v/<str:token>/training-done/", views.training_done, name="training_done"),
    path("v/<str:token>/answer/", views.answer, name="answer"),
    path("v/<str:token>/training/<int:pair_id>/", views.feedback, name="feedback"),
    path("v/<str:token>/done/", views.done, name="done"),
    path("v/<str:token>/return/", views.return_study, name="return_study"),
    path("staff/campaigns/<slug:slug>/volunteers/", staff.volunteers, name="staff-volunteers"),
    path("staff/campaigns/<slug:slug>/participants.csv", staff.participants_csv, name="staff-participants-csv"),
    path("v/<str:token>/returned/", views.returned, name="returned"),
    path("staff/campaigns/new/", campaign_views.new_campaign, name="staff-campaign-new"),
    path("staff/campaigns/new/from-definition/", campaign_views.import_definition, name="staff-campaign-load"),
    path("staff/campaigns/<slug:slug>/settings/", campaign_views.settings_page, name="staff-campaign-settings"),
    path("staff/campaigns/<slug:slug>/clone/", campaign_views.clone, name="staff-campaign-clone"),
    path(
        "staff/campaigns/<slug:slug>/definition.json",
        campaign_views.definition_file,
        name="staff-campaign-definition",
    ),
    path("staff/campaigns/<slug:slug>/upload/", upload_views.upload, name="staff-upload"),
    path("staff/campaigns/<slug:slug>/upload/<int:upload_id>/", upload_views.detail, name="staff-upload-detail"),
    path(
        "staff/campaigns/<slug:slug>/upload/<int:upload_id>/status.json",
        upload_views.status,
        name="staff-upload-status",
    ),
    path(
        "staff/campaigns/<slug:slug>/upload/<int:upload_id>/<str:mode>/",
        upload_views.start,
        name="staff-upload-start",
    ),
]
