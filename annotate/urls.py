"""The volunteer flow."""

app_name = "annotate"

urlpatterns: list = []
