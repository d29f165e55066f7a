"""The volunteer flow: the campaign link, the guidelines, and the volunteer's own pages."""

from django.urls import path

from annotate import views

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
    path("v/<str:token>/returned/", views.returned, name="returned"),
]
