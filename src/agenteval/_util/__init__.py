"""Foundation shared by every layer; imports nothing of agenteval but :mod:`agenteval.errors`.

Lazy package attributes (:mod:`.lazy`), loading user code by path (:mod:`.imports`), YAML
with bounded aliases (:mod:`.yaml_guard`), secrets kept out of output (:mod:`.secrets`),
untrusted text made safe to show (:mod:`.untrusted`), output paths that never overwrite an
input (:mod:`.outpaths`), text normalisation (:mod:`.text`, :mod:`.identity`) and the
garbage-collector guard for long loops (:mod:`.gc`).
"""
