"""A local Cloud Storage server for the tests: gcp-storage-emulator, sending object generations.

  python tests/gcs_server.py start --host=localhost --port=PORT --in-memory --default-bucket=NAME

Cloud Storage names the generation of the object a download returns in its
x-goog-generation header; the emulator leaves the header out. Tensorstore
(orbax's OCDBT checkpoints) reads it to rewrite a manifest only if it is still
the one it read, and fails with 'Malformed StorageGeneration' without it.
"""

import sys

from gcp_storage_emulator.exceptions import NotFound
from gcp_storage_emulator.handlers import objects

_download = objects.download


def download(request, response, storage, *args, **kwargs):
  _download(request, response, storage, *args, **kwargs)
  try:
    found = storage.get_file_obj(request.params["bucket_name"], request.params["object_id"])
  except NotFound:
    return
  response["x-goog-generation"] = found["generation"]
  response["x-goog-metageneration"] = found["metageneration"]


if __name__ == "__main__":
  objects.download = download  # before the server module builds its routes from it
  from gcp_storage_emulator.__main__ import main  # pylint: disable=wrong-import-position
  main(sys.argv[1:])
