from django.db import models

#: Stored lowercase, shown capitalised ("Poetry") in the admin's form and filter.
GENRES = [(name, name.capitalize()) for name in (
    "fiction", "poetry", "history", "science", "travel", "mystery", "drama", "biography",
)]


class Book(models.Model):
    title = models.CharField(max_length=200)
    author = models.CharField(max_length=200)
    year = models.IntegerField()
    genre = models.CharField(max_length=20, choices=GENRES)

    def __str__(self) -> str:
        return self.title
