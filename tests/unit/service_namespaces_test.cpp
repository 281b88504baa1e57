#include "daemon/service_namespaces.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace edgeshed::daemon {
namespace {

using config::NetnsRef;

uint32_t own_netns_inode() {
  struct stat st {};
  EXPECT_EQ(::stat("/proc/self/ns/net", &st), 0);
  return static_cast<uint32_t>(st.st_ino);
}

// A cgroup v2 tree as kubelet leaves a pod's: the pod's folder holds no
// process, its containers' folders below do. Files only, so any folder does.
struct FakePodCgroup {
  std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("edgeshed-pod-" + std::to_string(::getpid()));
  explicit FakePodCgroup(pid_t member) {
    std::filesystem::create_directories(root / "container-a");
    std::ofstream pod_procs(root / "cgroup.procs");  // empty
    std::ofstream container_procs(root / "container-a" / "cgroup.procs");
    container_procs << member << "\n";
  }
  ~FakePodCgroup() { std::filesystem::remove_all(root); }
};

config::PortConfig port_in(uint16_t port, NetnsRef ref) {
  config::PortConfig p;
  p.port = port;
  p.netns = std::move(ref);
  return p;
}

TEST(ServiceNamespaces, ResolvesAFileAPidAndACgroupToTheNamespacesInode) {
  const uint32_t own = own_netns_inode();
  auto by_file = resolve_netns({NetnsRef::Kind::kPath, "/proc/self/ns/net", 0});
  ASSERT_TRUE(by_file) << by_file.error().message;
  EXPECT_EQ(by_file->inode, own);
  auto by_pid = resolve_netns({NetnsRef::Kind::kPid, "", static_cast<uint32_t>(::getpid())});
  ASSERT_TRUE(by_pid) << by_pid.error().message;
  EXPECT_EQ(by_pid->inode, own);
  EXPECT_EQ(by_pid->file, "/proc/" + std::to_string(::getpid()) + "/ns/net");
  FakePodCgroup pod(::getpid());
  auto by_cgroup = resolve_netns({NetnsRef::Kind::kCgroup, pod.root.string(), 0});
  ASSERT_TRUE(by_cgroup) << by_cgroup.error().message;
  EXPECT_EQ(by_cgroup->inode, own);
}

TEST(ServiceNamespaces, SaysWhyThereIsNone) {
  auto not_ns = resolve_netns({NetnsRef::Kind::kPath, "/proc/self/status", 0});
  ASSERT_FALSE(not_ns);
  EXPECT_EQ(not_ns.error().message, "/proc/self/status is not a namespace file");
  auto missing = resolve_netns({NetnsRef::Kind::kPath, "/run/netns/edgeshed-no-such-ns", 0});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "/run/netns/edgeshed-no-such-ns: No such file or directory");
  auto no_cgroup = resolve_netns({NetnsRef::Kind::kCgroup, "/sys/fs/cgroup/edgeshed-none", 0});
  ASSERT_FALSE(no_cgroup);
  EXPECT_EQ(no_cgroup.error().message, "no such cgroup");
  FakePodCgroup empty(::getpid());
  std::filesystem::remove_all(empty.root / "container-a");
  auto no_process = resolve_netns({NetnsRef::Kind::kCgroup, empty.root.string(), 0});
  ASSERT_FALSE(no_process);
  EXPECT_EQ(no_process.error().message, "no process in the cgroup");
}

TEST(ServiceNamespaces, AChangeIsReportedOnceAndAGoneNamespaceCountsNothing) {
  ServiceNamespaces namespaces;
  const config::PortConfig host;  // the interface's namespace
  const auto here = port_in(8080, {NetnsRef::Kind::kPath, "/proc/self/ns/net", 0});
  const auto gone = port_in(8081, {NetnsRef::Kind::kPath, "/run/netns/edgeshed-no-such-ns", 0});
  EXPECT_TRUE(namespaces.refresh({host, here, gone}));
  EXPECT_FALSE(namespaces.refresh({host, here, gone}));
  EXPECT_EQ(namespaces.inode_of(host), 0u);
  EXPECT_EQ(namespaces.inode_of(here), own_netns_inode());
  EXPECT_EQ(namespaces.inode_of(gone), static_cast<uint32_t>(EDGESHED_NETNS_NONE));
  EXPECT_EQ(namespaces.files(), std::vector<std::string>{"/proc/self/ns/net"});
  // A port no longer configured is forgotten.
  EXPECT_TRUE(namespaces.refresh({host, gone}));
  EXPECT_TRUE(namespaces.files().empty());
}

}  // namespace
}  // namespace edgeshed::daemon
