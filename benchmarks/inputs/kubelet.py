"""The ``kubelet`` input: ``journalctl -o short-precise`` text of one GKE TPU node (formats.md
§2.3, §2.6), read by the kubelet reader.

Mostly routine kubelet klog chatter (SyncLoop, PLEG events, probes, status patches, volume
mounts, pod startup latency), some containerd (logrus), kernel and node-problem-detector lines,
a few errors (``pod_workers`` CrashLoopBackOff, ContainerStatus NotFound, node status updates,
TPU admission) and rare sequences (eviction, cgroup OOM kill, a liveness probe with a
multi-line ``output=<`` value, node shutdown). About 20 hours of journal, ending 4 hours before
the TPU inputs start.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import numpy as np
import polars as pl

from benchmarks.inputs.clock import START_NS, rfc3339, subsecond_digits, unit_spacing_ns
from benchmarks.inputs.pool import Category, Layout, Line, Pool, UnitsSpec, fill, make_pool, stamped
from benchmarks.inputs.strings import compact_json, go_quote, random_hex, random_uuid

#: The journal starts a day before the TPU inputs and spans about 20 hours: it leads up to
#: the incident.
JOURNAL_START_NS: Final = START_NS - 86_400 * 1_000_000_000
#: Kernel lines carry seconds since boot; the node booted 2 h before the first line.
BOOT_NS: Final = JOURNAL_START_NS - 7_200 * 1_000_000_000
NODE: Final = "gke-tpu-v5p-train-tpu-pool-1-6f3b2c1a-m9xq"
KUBELET_PID: Final = 2480
CONTAINERD_PID: Final = 2388
NPD_PID: Final = 3240
#: Categories: routine chatter, other info, warnings, errors, multi-line sequences.
WEIGHTS: Final = np.array([0.9, 0.085, 0.0125, 0.002, 0.0005])

#: About how long a line of this input is.
LINE_BYTES: Final = 340

# Stamp kinds (pool line families): what sits between a pool line's lead and its body.
KLOG_STAMP: Final = 0  # 'kubelet[2480]: I' + '1129 18:34:45.000152' + '    2480 x.go:1] msg'
RFC3339_STAMP: Final = 1  # 'containerd[2388]: time="' + RFC 3339 (ns, UTC) + '" level=info msg=…'
UPTIME_STAMP: Final = 2  # 'kernel: [' + ' 8523.347333' (seconds since boot) + '] msg'
NO_STAMP: Final = 3  # no stamp: continuation lines of a multi-line klog value


@dataclass(frozen=True)
class _Pod:
    namespace: str
    name: str
    uid: str
    container: str
    volumes: tuple[str, ...]

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"


def _suffix(r: random.Random, k: int = 5) -> str:
    return "".join(r.choices("bcdfghjklmnpqrstvwxz2456789", k=k))


def _clock(r: random.Random, day: str) -> str:
    return f"{day} {r.randrange(24):02d}:{r.randrange(60):02d}:{r.randrange(60):02d}"


def _klog(
    level: str, where: str, message: str, ident: str = "kubelet", pid: int = KUBELET_PID
) -> Line:
    return (KLOG_STAMP, f"{ident}[{pid}]: {level}", f" {pid:>7} {where}] {message}")


def _npd(where: str, message: str) -> Line:
    return _klog("I", where, message, ident="node-problem-detector", pid=NPD_PID)


def _containerd(level: str, message: str, fields: str = "") -> Line:
    """A containerd logrus line: ``msg`` Go-quoted, then ``fields`` (`` key=value`` …)."""
    return (
        RFC3339_STAMP,
        f'containerd[{CONTAINERD_PID}]: time="',
        f'" level={level} msg={go_quote(message)}{fields}',
    )


def _kernel(message: str) -> Line:
    return (UPTIME_STAMP, "kernel: [", f"] {message}")


def _continued(text: str) -> Line:
    """A line of a multi-line klog value: journald stores each line as its own entry."""
    return (NO_STAMP, f"kubelet[{KUBELET_PID}]: ", text)


def _node_pods(r: random.Random) -> tuple[list[_Pod], list[_Pod]]:
    """The node's TPU training pods (one at a time, recreated by JobSet restarts) and its
    system pods."""
    training = [
        _Pod(
            "default",
            f"llm-pretrain-slice-1-3-{_suffix(r)}",
            random_uuid(r),
            "jax-tpu",
            (f"kube-api-access-{_suffix(r)}", "dshm", "gcs-fuse-csi-ephemeral"),
        )
        for _ in range(4)
    ]
    system = [
        _Pod(ns, name, random_uuid(r), container, (f"kube-api-access-{_suffix(r)}", *volumes))
        for ns, name, container, volumes in (
            ("kube-system", f"tpu-device-plugin-{_suffix(r)}", "tpu-device-plugin", ("plugin",)),
            ("kube-system", f"kube-proxy-{NODE}", "kube-proxy", ("kubeconfig", "iptableslock")),
            ("kube-system", f"fluentbit-gke-{_suffix(r)}", "fluentbit", ("varlog", "varrun")),
            ("kube-system", f"gke-metadata-server-{_suffix(r)}", "gke-metadata-server", ()),
            ("kube-system", f"netd-{_suffix(r)}", "netd", ("cni-net-dir",)),
            ("kube-system", f"pdcsi-node-{_suffix(r)}", "gce-pd-driver", ("kubelet-dir",)),
            ("kube-system", f"node-local-dns-{_suffix(r)}", "node-cache", ("config-volume",)),
            ("gmp-system", f"collector-{_suffix(r)}", "prometheus", ("config-out", "storage")),
        )
    ]
    return training, system


def build_pool(seed: int) -> Pool:
    """Distinct journal lines of one GKE TPU node, grouped into units per category."""
    r = random.Random(f"culprit-bench-kubelet-{seed}")
    training, system = _node_pods(r)
    cids = {pod.uid: [random_hex(r, 64) for _ in range(6)] for pod in training + system}
    sandboxes = {pod.uid: random_hex(r, 64) for pod in training + system}

    def pod_of(rr: random.Random) -> _Pod:
        return rr.choice(training) if rr.random() < 0.3 else rr.choice(system)

    def volume(rr: random.Random, p: _Pod, what: str) -> str:
        vol = rr.choice(p.volumes)
        kind = "projected" if vol.startswith("kube-api") else "empty-dir"
        return (
            f'"{what} for volume \\"{vol}\\" (UniqueName: \\"kubernetes.io/{kind}/{p.uid}-{vol}'
            f'\\") pod \\"{p.name}\\" (UID: \\"{p.uid}\\") " pod="{p.ref}"'
        )

    def pleg(p: _Pod, kind: str, rr: random.Random) -> Line:
        event = {"ID": p.uid, "Type": kind, "Data": rr.choice(cids[p.uid])}
        message = f'"SyncLoop (PLEG): event for pod" pod="{p.ref}" event={compact_json(event)}'
        return _klog("I", "kubelet.go:2455", message)

    def finished(p: _Pod, cid: str, code: int) -> Line:
        return _klog(
            "I",
            "generic.go:334",
            f'"Generic (PLEG): container finished" podID="{p.uid}" containerID="{cid}" '
            f"exitCode={code}",
        )

    def killing(p: _Pod, cid: str, grace: int) -> Line:
        # Older kubelets print podUID unquoted (formats.md §2.2).
        return _klog(
            "I",
            "kuberuntime_container.go:709",
            f'"Killing container with a grace period" pod="{p.ref}" podUID={p.uid} '
            f'containerName="{p.container}" containerID="containerd://{cid}" '
            f"gracePeriod={grace}",
        )

    def patch(p: _Pod, rr: random.Random) -> str:
        order = ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady")
        condition = {
            "lastProbeTime": None,
            "lastTransitionTime": _clock(rr, "2026-11-28").replace(" ", "T") + "Z",
            "status": rr.choice(["True", "False"]),
            "type": "Ready",
        }
        body = {
            "metadata": {"uid": p.uid},
            "status": {
                "$setElementOrder/conditions": [{"type": t} for t in order],
                "conditions": [condition],
            },
        }
        return go_quote(compact_json(body))

    def ip(rr: random.Random) -> str:
        return f"10.128.{rr.randrange(256)}.{rr.randrange(1, 255)}"

    def chatter(rr: random.Random) -> list[Line]:
        p = pod_of(rr)
        choice = rr.randrange(12)
        if choice == 0:
            probe = rr.choice(["readiness", "liveness", "startup"])
            status = {"readiness": "ready", "liveness": "unhealthy", "startup": "started"}[probe]
            status = status if rr.random() < 0.8 else ""
            return [
                _klog(
                    "I",
                    "kubelet.go:2542",
                    f'"SyncLoop (probe)" probe="{probe}" status="{status}" pod="{p.ref}"',
                )
            ]
        if choice == 1:
            return [pleg(p, "ContainerStarted", rr)]
        if choice == 2:
            return [
                _klog("I", "kubelet.go:2423", f'"SyncLoop UPDATE" source="api" pods=["{p.ref}"]')
            ]
        if choice == 3:
            ref = rr.choice(system).ref
            return [
                _klog(
                    "I",
                    "kubelet_getters.go:218",
                    f'"Pod status updated" pod="{ref}" status="Running"',
                )
            ]
        if choice == 4:
            return [
                _klog(
                    "I",
                    "status_manager.go:877",
                    f'"Patch status for pod" pod="{p.ref}" podUID="{p.uid}" patch={patch(p, rr)}',
                )
            ]
        if choice == 5:
            what = "operationExecutor.VerifyControllerAttachedVolume started"
            return [_klog("I", "reconciler_common.go:245", volume(rr, p, what))]
        if choice == 6:
            what = "operationExecutor.MountVolume started"
            return [_klog("I", "reconciler_common.go:218", volume(rr, p, what))]
        if choice == 7:
            what = "MountVolume.SetUp succeeded"
            return [_klog("I", "operation_generator.go:637", volume(rr, p, what))]
        if choice == 8:
            source = f"{ip(rr)}:{rr.randrange(30000, 60000)}"
            return [_klog("I", "log.go:245", f"http: TLS handshake error from {source}: EOF")]
        if choice == 9:
            kind = rr.choice(["ConfigMap", "Secret", "Service", "RuntimeClass", "CSIDriver"])
            return [
                _klog(
                    "I",
                    "reflector.go:368",
                    f'"Caches populated" type="*v1.{kind}" '
                    f'reflector="object-\\"{p.namespace}\\"/\\"kube-root-ca.crt\\""',
                )
            ]
        if choice == 10:
            seconds = rr.uniform(2, 90)
            never = "0001-01-01 00:00:00 +0000 UTC"
            return [
                _klog(
                    "I",
                    "pod_startup_latency_tracker.go:104",
                    f'"Observed pod startup duration" pod="{p.ref}" '
                    f"podStartSLOduration={seconds:.9f} "
                    f'podStartE2EDuration="{seconds + rr.uniform(0, 30):.9f}s" '
                    f'podCreationTimestamp="{_clock(rr, "2026-11-28")} +0000 UTC" '
                    f'firstStartedPulling="{never}" lastFinishedPulling="{never}"',
                )
            ]
        return [killing(p, rr.choice(cids[p.uid]), rr.choice([30, 30, 30, 10, 2]))]

    def info(rr: random.Random) -> list[Line]:
        p = pod_of(rr)
        cid = rr.choice(cids[p.uid])
        choice = rr.randrange(12)
        if choice == 0:
            return [_containerd("info", f"StartContainer for {go_quote(cid)} returns successfully")]
        if choice == 1:
            meta = f"&ContainerMetadata{{Name:{p.container},Attempt:{rr.randrange(6)},}}"
            sandbox = go_quote(sandboxes[p.uid])
            return [
                _containerd(
                    "info", f"CreateContainer within sandbox {sandbox} for container {meta}"
                )
            ]
        if choice == 2:
            return [_containerd("info", "shim disconnected", f" id={cid} namespace=k8s.io")]
        if choice == 3:
            return [
                _containerd("info", f"RemoveContainer for {go_quote(cid)} returns successfully")
            ]
        if choice == 4:
            image = go_quote("us-docker.pkg.dev/my-tpu-proj/llm/jax-train:2026.11.27")
            label = '{key:"io.cri-containerd.image" value:"managed"}'
            return [_containerd("info", f"ImageCreate event name:{image} labels:{label}")]
        if choice == 5:
            veth = f"veth{random_hex(rr, 8)}"
            return [_kernel(f"IPv6: ADDRCONF(NETDEV_CHANGE): {veth}: link becomes ready")]
        if choice == 6:
            port = f"{rr.randrange(1, 40)}(veth{random_hex(rr, 8)})"
            return [_kernel(f"cbr0: port {port} entered forwarding state")]
        if choice == 7:
            return [
                _npd(
                    "custom_plugin_monitor.go:280",
                    "New status generated: &{Source:health-checker-kubelet Events:[] "
                    "Conditions:[{Type:KubeletUnhealthy Status:False Transition:2026-11-28 "
                    "15:41:02 +0000 UTC Reason:KubeletIsHealthy Message:kubelet on the node is "
                    "functioning properly}]}",
                )
            ]
        if choice == 8:
            return [finished(p, cid, 0)]
        if choice == 9:
            return [_klog("I", "scope.go:117", f'"RemoveContainer" containerID="{cid}"')]
        if choice == 10:
            return [
                _klog(
                    "I",
                    "pod_container_deletor.go:80",
                    f'"Container not found in pod\'s containers" containerID="{cid}"',
                )
            ]
        return [_klog("I", "kubelet.go:2416", f'"SyncLoop ADD" source="api" pods=["{p.ref}"]')]

    def warning(rr: random.Random) -> list[Line]:
        p = pod_of(rr)
        choice = rr.randrange(5)
        if choice == 0:
            path = (
                "/sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"
                f"{p.uid.replace('-', '_')}.slice/cri-containerd-{rr.choice(cids[p.uid])}.scope"
            )
            return [
                _klog(
                    "W",
                    "watcher.go:93",
                    f'Error while processing event ("{path}": 0x40000100 == IN_CREATE|IN_ISDIR): '
                    f"inotify_add_watch {path}: no such file or directory",
                )
            ]
        if choice == 1:
            address = f"{ip(rr)}:{rr.choice([8080, 9090, 8471])}"
            output = go_quote(
                f'Get "http://{address}/healthz": dial tcp {address}: connect: connection refused'
            )
            return [
                _klog(
                    "I",
                    "prober.go:107",
                    f'"Probe failed" probeType="Readiness" pod="{p.ref}" podUID="{p.uid}" '
                    f'containerName="{p.container}" probeResult="failure" output={output}',
                )
            ]
        if choice == 2:
            inner = (
                'time="2026-11-28T17:51:12Z" level=warning msg="failed to remove runc container" '
                'error="runc did not terminate successfully: exit status 255: " '
                "runtime=io.containerd.runc.v2"
            )
            return [_containerd("warning", f"cleanup warnings {inner}", " namespace=k8s.io")]
        if choice == 3:
            return [
                _klog(
                    "W",
                    "kubelet_pods.go:1010",
                    '"Unable to retrieve pull secret, the image pull may not succeed." '
                    f'pod="{p.ref}" secret="" err="secret \\"regcred\\" not found"',
                )
            ]
        return [
            _klog(
                "W",
                "reflector.go:470",
                "k8s.io/client-go/informers/factory.go:160: watch of *v1.Node ended with: an "
                'error on the server ("unable to decode an event from the watch stream: http2: '
                'client connection lost") has prevented the request from succeeding',
            )
        ]

    def crashloop(p: _Pod) -> Line:
        err = go_quote(
            f'failed to "StartContainer" for "{p.container}" with CrashLoopBackOff: '
            f'"back-off 5m0s restarting failed container={p.container} '
            f'pod={p.name}_{p.namespace}({p.uid})"'
        )
        return _klog(
            "E",
            "pod_workers.go:1301",
            f'"Error syncing pod, skipping" err={err} pod="{p.ref}" podUID="{p.uid}"',
        )

    def error(rr: random.Random) -> list[Line]:
        p = rr.choice(training)
        cid = rr.choice(cids[p.uid])
        not_found = go_quote(
            "rpc error: code = NotFound desc = an error occurred when try to find container "
            f'"{cid}": not found'
        )
        choice = rr.randrange(7)
        if choice == 0:
            return [crashloop(p)]
        if choice == 1:
            return [
                _klog(
                    "E",
                    "remote_runtime.go:432",
                    f'"ContainerStatus from runtime service failed" err={not_found} '
                    f'containerID="{cid}"',
                )
            ]
        if choice == 2:
            err = go_quote(
                f'error getting node "{NODE}": Get "https://10.0.0.2:443/api/v1/nodes/{NODE}'
                '?timeout=10s": net/http: request canceled (Client.Timeout exceeded while '
                "awaiting headers)"
            )
            return [
                _klog(
                    "E",
                    "kubelet_node_status.go:549",
                    f'"Error updating node status, will retry" err={err}',
                )
            ]
        if choice == 3:
            err = go_quote(
                "Allocate failed due to requested number of devices unavailable for "
                "google.com/tpu. Requested: 4, Available: 0, which is unexpected"
            )
            return [
                _klog(
                    "E",
                    "kubelet.go:2425",
                    '"Failed to admit pod, unexpected error while attempting to recover from '
                    f'admission failure" pod="{p.ref}" err={err}',
                )
            ]
        if choice == 4:
            return [
                _containerd(
                    "error", f"ContainerStatus for {go_quote(cid)} failed", f" error={not_found}"
                )
            ]
        if choice == 5:
            return [
                _klog(
                    "E",
                    "cpu_manager.go:395",
                    f'"RemoveStaleState: removing container" podUID="{p.uid}" '
                    f'containerName="{p.container}"',
                )
            ]
        path = f"/var/log/pods/{p.namespace}_{p.name}_{p.uid}/{p.container}/{rr.randrange(5)}.log"
        return [
            _klog(
                "E",
                "log.go:32",
                '"Failed when writing line to log file" err="http2: stream closed" '
                f'path="{path}" line={rr.randrange(1, 4096)}',
            )
        ]

    def sequence(rr: random.Random) -> list[Line]:
        p = rr.choice(training)
        cid = rr.choice(cids[p.uid])
        choice = rr.randrange(5)
        if choice == 0:  # eviction under memory pressure
            ranked = " ".join([p.ref, *(s.ref for s in rr.sample(system, 3))])
            reclaim = 'resourceName="memory"'
            return [
                _klog(
                    "W",
                    "eviction_manager.go:366",
                    f'"Eviction manager: attempting to reclaim" {reclaim}',
                ),
                _klog(
                    "I",
                    "eviction_manager.go:377",
                    f'"Eviction manager: must evict pod(s) to reclaim" {reclaim}',
                ),
                _klog(
                    "I",
                    "eviction_manager.go:374",
                    f'"Eviction manager: pods ranked for eviction" pods="[{ranked}]"',
                ),
                killing(p, cid, 30),
                pleg(p, "ContainerDied", rr),
                _klog(
                    "I",
                    "eviction_manager.go:595",
                    f'"Eviction manager: pod is evicted successfully" pod="{p.ref}"',
                ),
            ]
        if choice == 1:  # container OOM: kernel, containerd, node-problem-detector, kubelet
            pid = rr.randrange(100_000, 400_000)
            killed = f"Memory cgroup out of memory: Killed process {pid} (python3)"
            return [
                _kernel(
                    "python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, "
                    "oom_score_adj=-997"
                ),
                _kernel(
                    f"{killed} total-vm:{rr.randrange(10**8, 4 * 10**8)}kB, "
                    f"anon-rss:{rr.randrange(10**8, 4 * 10**8)}kB, "
                    f"file-rss:{rr.randrange(10**5)}kB, "
                    f"shmem-rss:{rr.randrange(10**4)}kB, UID:0 pgtables:{rr.randrange(10**5)}kB "
                    "oom_score_adj:-997"
                ),
                _containerd("info", f"TaskOOM event container_id:{go_quote(cid)}"),
                _npd(
                    "log_monitor.go:160",
                    "New status generated: &{Source:kernel-monitor Events:[{Severity:warn "
                    f"Reason:OOMKilling Message:{killed}}}]}}",
                ),
                finished(p, cid, 137),
                pleg(p, "ContainerDied", rr),
            ]
        if choice == 2:  # liveness probe failure with a multi-line output value (klog key=<)
            return [
                _klog(
                    "I",
                    "prober.go:107",
                    f'"Probe failed" probeType="Liveness" pod="{p.ref}" podUID="{p.uid}" '
                    f'containerName="{p.container}" probeResult="failure" output=<',
                ),
                _continued("\tTraceback (most recent call last):"),
                _continued('\t  File "/app/healthz.py", line 12, in <module>'),
                _continued("\tConnectionRefusedError: [Errno 111] Connection refused"),
                _continued(" >"),
                _klog(
                    "I",
                    "kuberuntime_manager.go:1056",
                    f'"Message for Container of pod" containerName="{p.container}" '
                    f'containerStatusID="{cid}" pod="{p.ref}" containerMessage="Container '
                    f'{p.container} failed liveness probe, will be restarted"',
                ),
            ]
        if choice == 3:  # crash loop
            return [
                finished(p, cid, 1),
                pleg(p, "ContainerDied", rr),
                _klog("I", "scope.go:117", f'"RemoveContainer" containerID="{cid}"'),
                crashloop(p),
            ]
        return [  # graceful node shutdown (maintenance)
            _klog(
                "I",
                "nodeshutdown_manager_linux.go:262",
                '"Shutdown manager detected new shutdown event, isNodeShuttingDownNow" event=true',
            ),
            _klog(
                "I",
                "nodeshutdown_manager_linux.go:324",
                '"Shutdown manager completed processing shutdown event, node will shutdown '
                'shortly"',
            ),
        ]

    specs: list[UnitsSpec] = [
        (Category.CHATTER, chatter, 3000),
        (Category.INFO, info, 1500),
        (Category.WARNING, warning, 600),
        (Category.ERROR, error, 300),
        (Category.MULTILINE, sequence, 100),
    ]
    return make_pool(r, specs)


def generate(path: Path, target: int, seed: int) -> None:
    """Write about ``target`` bytes of journal to ``path``."""
    pool = build_pool(seed)

    def render(frame: pl.DataFrame, rng: np.random.Generator) -> pl.Series:
        # journald stamps an entry when it receives it, a little after the program's clock;
        # containerd's own stamp has nanoseconds.
        delay = rng.integers(15_000, 400_000, size=frame.height)
        frame = frame.with_columns(jts=pl.col("pts") + pl.Series(delay))
        pts = pl.col("pts").cast(pl.Datetime("ns"))
        uptime = pl.col("pts") - BOOT_NS
        stamps = {
            KLOG_STAMP: pts.dt.to_string("%m%d %H:%M:%S%.6f"),
            RFC3339_STAMP: rfc3339(pl.col("pts") + pl.col("jts") % 1000),
            UPTIME_STAMP: pl.concat_str(
                [
                    (uptime // 1_000_000_000).cast(pl.String).str.pad_start(5),
                    pl.lit("."),
                    subsecond_digits(uptime, 6),
                ]
            ),
        }
        return frame.select(
            pl.concat_str(
                [
                    pl.col("jts").cast(pl.Datetime("ns")).dt.to_string("%b %d %H:%M:%S%.6f"),
                    pl.lit(f" {NODE} "),
                    stamped(pool, frame, stamps),
                    pl.lit("\n"),
                ]
            )
        ).to_series()

    first = dt.datetime.fromtimestamp(JOURNAL_START_NS // 1_000_000_000 - 5, dt.UTC)
    journal, klog = first.strftime("%b %d %H:%M:%S"), first.strftime("%m%d %H:%M:%S")
    startup = [
        'flags.go:64] FLAG: --v="2"',
        'server.go:487] "Kubelet version" kubeletVersion="v1.30.5-gke.1014001"',
        'server.go:489] "Golang settings" GOGC="" GOMAXPROCS="" GOTRACEBACK=""',
        f'kubelet_node_status.go:76] "Attempting to register node" node="{NODE}"',
        f'kubelet_node_status.go:79] "Successfully registered node" node="{NODE}"',
    ]
    head = "".join(
        [
            f"{journal}.000412 {NODE} systemd[1]: Started kubelet.service - Kubernetes Kubelet.\n",
            *(
                f"{journal}.{10_000 + 731 * i:06d} {NODE} kubelet[{KUBELET_PID}]: "
                f"I{klog}.{9_000 + 731 * i:06d} {KUBELET_PID:>7} {message}\n"
                for i, message in enumerate(startup)
            ),
        ]
    ).encode()
    unit_ns = unit_spacing_ns(target, LINE_BYTES)
    layout = Layout(pool, WEIGHTS, hosts=1, start_ns=JOURNAL_START_NS, unit_ns=unit_ns)
    fill(path, target, seed, layout, render, head)
