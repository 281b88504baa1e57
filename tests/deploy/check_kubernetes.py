#!/usr/bin/python3
"""Checks deploy/kubernetes without a cluster.

1. Every document parses (duplicate keys are errors: YAML keeps the last one
   silently) and round-trips unchanged through the Kubernetes API's own
   models (python3-kubernetes): a misspelt or misplaced field is dropped by
   the model and shows up as a difference, a wrong type as a difference or
   an error, a missing required field as an error.
2. The objects fit together: one namespace, the DaemonSet's service account,
   ConfigMap and selector exist and match, kustomization lists every file.
3. The DaemonSet says what edgeshed needs: hostNetwork, exactly the systemd
   unit's capabilities instead of privileged, the bpffs and BTF hostPath
   mounts, /run/edgeshed, the config, readiness (GET /ready) and liveness
   (GET /metrics) probes on the metrics port,
   Prometheus annotations, rolling updates, priority and tolerations.

4. The overlay deploy/kubernetes/pods (a pod's service on the node) patches
   exactly that: hostPID, SYS_ADMIN and SYS_PTRACE on top of the unit's
   capabilities, and a ConfigMap that is the base's plus one port whose
   service is found by its listener.

Prints the ConfigMap's edgeshed.toml to the path given as the first
argument, and the overlay's to the second, for the shell test to hand to
the real config parser.
"""
import json
import pathlib
import re
import sys

import yaml
from kubernetes.client import ApiClient

from checks import check, errors, report

ROOT = pathlib.Path(__file__).resolve().parents[2]
K8S = ROOT / "deploy" / "kubernetes"
UNIT = ROOT / "deploy" / "systemd" / "edgeshed.service.in"


class UniqueKeyLoader(yaml.SafeLoader):
    pass


def _mapping(loader, node, deep=False):
    seen = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep)


UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def differences(a, b, path=""):
    """Paths where the manifest a and its round trip b differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            if k not in b:
                out.append(f"{path}.{k}: not a field of the API object")
            elif k not in a:
                out.append(f"{path}.{k}: added by the model")
            else:
                out += differences(a[k], b[k], f"{path}.{k}")
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: {a!r} became {b!r}"]


MODELS = {
    ("v1", "Namespace"): "V1Namespace",
    ("v1", "ServiceAccount"): "V1ServiceAccount",
    ("v1", "ConfigMap"): "V1ConfigMap",
    ("apps/v1", "DaemonSet"): "V1DaemonSet",
}


class _Response:  # what ApiClient.deserialize reads
    def __init__(self, obj):
        self.data = json.dumps(obj)


def round_trip(doc, where):
    model = MODELS.get((doc.get("apiVersion"), doc.get("kind")))
    if not check(model, f"{where}: unexpected {doc.get('apiVersion')} {doc.get('kind')}"):
        return
    api = ApiClient()
    try:
        obj = api.deserialize(_Response(doc), model)
    except (ValueError, TypeError) as e:
        check(False, f"{where}: {model}: {e}")
        return
    back = api.sanitize_for_serialization(obj)
    for d in differences(doc, back):
        check(False, f"{where}: {model}{d}")


def unit_capabilities():
    m = re.search(r"^CapabilityBoundingSet=(.*)$", UNIT.read_text(), re.M)
    return sorted(c.removeprefix("CAP_") for c in m.group(1).split())


# The overlay's port, with the comment above it, in the ConfigMap's toml.
POD_PORT_BLOCK = re.compile(r"\n(?:#[^\n]*\n)*\[\[port\]\]\n(?:[a-z_]+ = [^\n]*\n)*"
                            r"netns = \"listener\"\n")


def check_pods_overlay(base_docs, out_path):
    """deploy/kubernetes/pods: the base with a pod's service added."""
    overlay = K8S / "pods"
    kust = yaml.load((overlay / "kustomization.yaml").read_text(), Loader=UniqueKeyLoader)
    check(kust.get("resources") == ["../"], "the pods overlay is not built on deploy/kubernetes")
    patches = {}
    for entry in kust.get("patches", []):
        doc = yaml.load((overlay / entry["path"]).read_text(), Loader=UniqueKeyLoader)
        patches[doc["kind"]] = doc
    if not check(set(patches) == {"DaemonSet", "ConfigMap"},
                 f"the pods overlay patches {sorted(patches)}, not the DaemonSet and the ConfigMap"):
        return
    for kind in patches:
        names = ("name", "namespace")
        check({k: patches[kind]["metadata"].get(k) for k in names}
              == {k: base_docs[kind]["metadata"][k] for k in names},
              f"the pods overlay's {kind} patch does not name the base's {kind}")

    # The strategic merge kustomize makes of the DaemonSet patch, done here.
    ds = json.loads(json.dumps(base_docs["DaemonSet"]))
    patch_pod = patches["DaemonSet"]["spec"]["template"]["spec"]
    check(set(patch_pod) == {"hostPID", "containers"}, f"the DaemonSet patch sets {sorted(patch_pod)}")
    ds["spec"]["template"]["spec"]["hostPID"] = patch_pod.get("hostPID")
    (patch_c,) = patch_pod["containers"]
    (c,) = ds["spec"]["template"]["spec"]["containers"]
    check(patch_c.get("name") == c["name"], "the DaemonSet patch names another container")
    c["securityContext"]["capabilities"]["add"] = patch_c["securityContext"]["capabilities"]["add"]
    round_trip(ds, "pods/daemonset.yaml merged")
    check(ds["spec"]["template"]["spec"]["hostPID"] is True, "the pods overlay sets no hostPID")
    caps = sorted(c["securityContext"]["capabilities"]["add"])
    want = sorted(unit_capabilities() + ["SYS_ADMIN", "SYS_PTRACE"])
    check(caps == want, f"the pods overlay's capabilities {caps} are not {want}")

    toml = patches["ConfigMap"]["data"]["edgeshed.toml"]
    blocks = POD_PORT_BLOCK.findall(toml)
    check(len(blocks) == 1, f"the pods overlay's config has {len(blocks)} ports found by listener, not 1")
    check(POD_PORT_BLOCK.sub("", toml, count=1) == base_docs["ConfigMap"]["data"]["edgeshed.toml"],
          "the pods overlay's config is not the base's plus the pod's port: it drifted")
    pathlib.Path(out_path).write_text(toml)


def main():
    docs = {}
    files = sorted(p.name for p in K8S.glob("*.yaml") if p.name != "kustomization.yaml")
    for name in files:
        text = (K8S / name).read_text()
        try:
            loaded = [d for d in yaml.load_all(text, Loader=UniqueKeyLoader) if d is not None]
        except yaml.YAMLError as e:
            check(False, f"{name}: {e}")
            continue
        for i, doc in enumerate(loaded):
            round_trip(doc, f"{name}[{i}]")
            docs[doc["kind"]] = doc

    kust = yaml.load((K8S / "kustomization.yaml").read_text(), Loader=UniqueKeyLoader)
    check(sorted(kust["resources"]) == files,
          f"kustomization resources {sorted(kust['resources'])} are not the files {files}")

    for kind in ("Namespace", "ServiceAccount", "ConfigMap", "DaemonSet"):
        check(kind in docs, f"no {kind}")
    if errors:
        return
    ns = docs["Namespace"]["metadata"]["name"]
    for kind in ("ServiceAccount", "ConfigMap", "DaemonSet"):
        check(docs[kind]["metadata"].get("namespace") == ns, f"{kind} is not in namespace {ns}")

    ds = docs["DaemonSet"]["spec"]
    pod = ds["template"]["spec"]
    meta = ds["template"]["metadata"]
    check(ds["selector"]["matchLabels"].items() <= meta["labels"].items(),
          "the selector does not match the pod template's labels")
    check(pod.get("serviceAccountName") == docs["ServiceAccount"]["metadata"]["name"],
          "serviceAccountName is not the ServiceAccount")
    check(pod.get("hostNetwork") is True, "hostNetwork is not true")
    check(pod.get("dnsPolicy") == "ClusterFirstWithHostNet",
          "dnsPolicy must be ClusterFirstWithHostNet under hostNetwork")
    check(pod.get("priorityClassName") == "system-node-critical", "priorityClassName")
    check({"operator": "Exists"} in pod.get("tolerations", []), "no toleration of every taint")
    check(isinstance(pod.get("terminationGracePeriodSeconds"), int), "terminationGracePeriodSeconds")
    strategy = ds.get("updateStrategy", {})
    check(strategy.get("type") == "RollingUpdate"
          and re.fullmatch(r"\d+%", str(strategy.get("rollingUpdate", {}).get("maxUnavailable", ""))),
          "updateStrategy is not RollingUpdate with a percentage maxUnavailable")

    ann = meta.get("annotations", {})
    check(ann.get("prometheus.io/scrape") == "true", "prometheus.io/scrape is not \"true\"")
    check(ann.get("prometheus.io/port") == "9477", "prometheus.io/port is not \"9477\"")

    (c,) = pod["containers"]
    sc = c.get("securityContext", {})
    check(not sc.get("privileged", False), "the container is privileged")
    check(sc.get("capabilities", {}).get("drop") == ["ALL"], "capabilities do not drop ALL")
    caps = sorted(sc.get("capabilities", {}).get("add", []))
    check(caps == unit_capabilities(),
          f"capabilities {caps} are not the systemd unit's {unit_capabilities()}")
    check(sc.get("allowPrivilegeEscalation") is False, "allowPrivilegeEscalation is not false")
    check(sc.get("readOnlyRootFilesystem") is True, "readOnlyRootFilesystem is not true")

    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["mountPath"]: m for m in c["volumeMounts"]}

    def host_path_mount(path, read_only):
        m = mounts.get(path)
        if not check(m, f"nothing mounted at {path}"):
            return
        v = volumes.get(m["name"], {})
        check(v.get("hostPath", {}).get("path") == path, f"{path} is not the host's {path}")
        check(bool(m.get("readOnly")) == read_only, f"{path} readOnly should be {read_only}")

    host_path_mount("/sys/fs/bpf", False)
    host_path_mount("/sys/kernel/btf", True)
    check("/run/edgeshed" in mounts, "nothing mounted at /run/edgeshed")
    cfg_mount = mounts.get("/etc/edgeshed")
    if check(cfg_mount, "no config mounted at /etc/edgeshed"):
        cfg_vol = volumes[cfg_mount["name"]]
        check(cfg_vol.get("configMap", {}).get("name") == docs["ConfigMap"]["metadata"]["name"],
              "the config volume is not the ConfigMap")
    args = c.get("command", []) + c.get("args", [])
    check(args[1:] == ["run", "--config", "/etc/edgeshed/edgeshed.toml"],
          f"the container does not run the daemon on the mounted config: {args}")
    check("edgeshed.toml" in docs["ConfigMap"]["data"], "the ConfigMap has no edgeshed.toml")

    ports = {p["name"]: p["containerPort"] for p in c.get("ports", [])}
    # Readiness follows the level (/ready); liveness must not, or a node at
    # critical would have its shedder restarted.
    for kind, path in (("readinessProbe", "/ready"), ("livenessProbe", "/metrics")):
        probe = c.get(kind, {}).get("httpGet", {})
        port = probe.get("port")
        check(probe.get("path") == path and ports.get(port, port) == 9477,
              f"{kind} is not GET {path} on 9477: {probe}")

    pathlib.Path(sys.argv[1]).write_text(docs["ConfigMap"]["data"]["edgeshed.toml"])
    check_pods_overlay(docs, sys.argv[2])
    print(f"image entrypoint: {c['command'][0]}")


if __name__ == "__main__":
    main()
    report(errors, "deploy/kubernetes: every object round-trips through the API models and fits")
