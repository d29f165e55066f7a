"""Staff pages: the agreement dashboard and the scoring status."""

app_name = "scoring"

urlpatterns: list = []
