"""The device the suite runs on: backend, kind, count, and the versions of jax and pgx."""

from suite.common import Record, pgx_version


def run(rec: Record, sizes: dict, deadline: float, args) -> None:
  del sizes, deadline, args
  import jax  # pylint: disable=import-outside-toplevel
  device = jax.devices()[0]
  rec.add({"backend": jax.default_backend(), "device": device.device_kind,
           "device_count": jax.device_count(), "jax": jax.__version__, "pgx": pgx_version()})
