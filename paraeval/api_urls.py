"""REST API routes (issue: export and API). Each app contributes its own viewsets."""

urlpatterns: list = []
