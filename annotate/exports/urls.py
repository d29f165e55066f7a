"""Staff export routes, mounted at ``/staff/export/`` by ``paraeval.urls``."""

from django.urls import path

from annotate.exports import views

app_name = "exports"

urlpatterns = [
    path("<slug:slug>/", views.campaign_export, name="campaign-export"),
]
