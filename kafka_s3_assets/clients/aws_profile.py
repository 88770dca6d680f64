"""A named AWS profile (``~/.aws/config``, ``~/.aws/credentials``, ``$AWS_CONFIG_FILE``) resolved into
the credentials and region it gives, once, where the files are: Spark tasks get the values and need
no profile of their own."""

from __future__ import annotations

from dataclasses import dataclass

import boto3
from botocore.exceptions import BotoCoreError, ClientError

from ..sink.secrets import Secret


class AwsProfileError(Exception):
    pass


@dataclass(frozen=True)
class ProfileCredentials:
    access_key_id: str
    secret_access_key: Secret
    session_token: Secret | None
    region: str | None


def resolve_profile(name: str) -> ProfileCredentials:
    """The profile's current credentials (an assume-role or SSO profile is asked for them now)."""
    try:
        session = boto3.session.Session(profile_name=name)
        credentials = session.get_credentials()
        frozen = credentials.get_frozen_credentials() if credentials is not None else None
    except (BotoCoreError, ClientError) as exc:
        raise AwsProfileError(f"AWS profile '{name}' cannot be used: {exc}") from None
    if frozen is None or not frozen.access_key or not frozen.secret_key:
        raise AwsProfileError(f"AWS profile '{name}' gives no credentials")
    return ProfileCredentials(
        frozen.access_key,
        Secret(frozen.secret_key),
        Secret(frozen.token) if frozen.token else None,
        session.region_name,
    )
