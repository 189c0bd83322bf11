"""Settings of the benchmark's Django app: the stock admin over one model, SQLite at $REALAPP_DB."""

import os

from django.core.exceptions import ImproperlyConfigured

try:
    DATABASE_PATH = os.environ["REALAPP_DB"]
except KeyError:
    raise ImproperlyConfigured("set REALAPP_DB to the path of the SQLite database file") from None

SECRET_KEY = "realapp-benchmark-only-not-secret"
DEBUG = True  # runserver serves the admin's static files (its CSS and JavaScript) only with DEBUG on
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "library",
]
MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]
ROOT_URLCONF = "realapp_site.urls"
TEMPLATES = [{
    "BACKEND": "django.template.backends.django.DjangoTemplates",
    "DIRS": [],
    "APP_DIRS": True,
    "OPTIONS": {"context_processors": [
        "django.template.context_processors.request",
        "django.contrib.auth.context_processors.auth",
        "django.contrib.messages.context_processors.messages",
    ]},
}]
WSGI_APPLICATION = None
DATABASES = {"default": {
    "ENGINE": "django.db.backends.sqlite3",
    "NAME": DATABASE_PATH,
    "OPTIONS": {"timeout": 20},
}}
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
