#include "daemon/service_namespaces.h"

#include "common/test_cgroup.h"
#include "daemon/listening_namespace.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

namespace edgeshed::daemon {
namespace {

using config::NetnsRef;
using testing::TestCgroup;

uint32_t own_netns_inode() {
  struct stat st {};
  EXPECT_EQ(::stat("/proc/self/ns/net", &st), 0);
  return static_cast<uint32_t>(st.st_ino);
}

uint32_t netns_inode_of(pid_t pid) {
  struct stat st {};
  EXPECT_EQ(::stat(("/proc/" + std::to_string(pid) + "/ns/net").c_str(), &st), 0);
  return static_cast<uint32_t>(st.st_ino);
}

// A process in a network namespace of its own, as a container's: killed
// and reaped when the test is done with it.
class Container {
 public:
  // listen_port: a TCP socket of the container's listens on it (0: none).
  explicit Container(uint16_t listen_port = 0) {
    int ready[2];
    if (::pipe(ready) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      // Root needs no user namespace; without root, one makes the net one.
      const bool own = ::unshare(CLONE_NEWNET) == 0 || ::unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0;
      const bool listens = listen_port == 0 || listen_on(listen_port);
      const char byte = own && listens ? '1' : '0';
      (void)::write(ready[1], &byte, 1);
      for (;;) ::pause();
    }
    char byte = '0';
    if (pid_ > 0 && ::read(ready[0], &byte, 1) == 1) in_own_netns_ = byte == '1';
    ::close(ready[0]);
    ::close(ready[1]);
  }
  Container(const Container&) = delete;
  Container& operator=(const Container&) = delete;
  ~Container() { stop(); }
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  pid_t pid() const { return pid_; }
  bool in_own_netns() const { return in_own_netns_; }

 private:
  static bool listen_on(uint16_t port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    return fd >= 0 && ::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0 &&
           ::listen(fd, 1) == 0;
  }

  pid_t pid_ = -1;
  bool in_own_netns_ = false;
};

// A port nothing listens on in this namespace now.
uint16_t free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  socklen_t len = sizeof(addr);
  uint16_t port = 0;
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
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
  auto by_file = resolve_netns({NetnsRef::Kind::kPath, "/proc/self/ns/net", 0, 0});
  ASSERT_TRUE(by_file) << by_file.error().message;
  EXPECT_EQ(by_file->inode, own);
  auto by_pid = resolve_netns({NetnsRef::Kind::kPid, "", static_cast<uint32_t>(::getpid()), 0});
  ASSERT_TRUE(by_pid) << by_pid.error().message;
  EXPECT_EQ(by_pid->inode, own);
  EXPECT_EQ(by_pid->file, "/proc/" + std::to_string(::getpid()) + "/ns/net");
  FakePodCgroup pod(::getpid());
  auto by_cgroup = resolve_netns({NetnsRef::Kind::kCgroup, pod.root.string(), 0, 0});
  ASSERT_TRUE(by_cgroup) << by_cgroup.error().message;
  EXPECT_EQ(by_cgroup->inode, own);
}

TEST(ServiceNamespaces, AContainersNamespaceIsItsOwnAndFollowedAsItComesAndGoes) {
  Container first;
  ASSERT_GT(first.pid(), 0);
  ASSERT_TRUE(first.in_own_netns()) << "the test needs a network namespace of its own";
  const uint32_t first_inode = netns_inode_of(first.pid());
  ASSERT_NE(first_inode, own_netns_inode());
  auto by_pid = resolve_netns({NetnsRef::Kind::kPid, "", static_cast<uint32_t>(first.pid()), 0});
  ASSERT_TRUE(by_pid) << by_pid.error().message;
  EXPECT_EQ(by_pid->inode, first_inode);

  // A pod's cgroup: a process gone first (reaped), the container's next.
  Container gone_before;
  const pid_t reaped = gone_before.pid();
  gone_before.stop();
  FakePodCgroup pod(first.pid());
  {
    std::ofstream procs(pod.root / "container-a" / "cgroup.procs");
    procs << reaped << "\n" << first.pid() << "\n";
  }
  auto by_cgroup = resolve_netns({NetnsRef::Kind::kCgroup, pod.root.string(), 0, 0});
  ASSERT_TRUE(by_cgroup) << by_cgroup.error().message;
  EXPECT_EQ(by_cgroup->inode, first_inode) << "the exited process is skipped";

  ServiceNamespaces namespaces;
  const auto port = port_in(8080, {NetnsRef::Kind::kCgroup, pod.root.string(), 0, 0});
  EXPECT_TRUE(namespaces.refresh({port}));
  EXPECT_EQ(namespaces.inode_of(port), first_inode);
  ASSERT_EQ(namespaces.present().size(), 1u);
  EXPECT_EQ(namespaces.present()[0].inode, first_inode);
  ASSERT_NE(namespaces.namespace_of(port), nullptr);
  EXPECT_EQ(namespaces.namespace_of(port)->inode, first_inode);
  EXPECT_FALSE(namespaces.refresh({port}));
  // The container goes: the port counts nothing.
  first.stop();
  EXPECT_TRUE(namespaces.refresh({port}));
  EXPECT_EQ(namespaces.inode_of(port), static_cast<uint32_t>(EDGESHED_NETNS_NONE));
  EXPECT_EQ(namespaces.found(*port.netns), std::optional<bool>(false));
  EXPECT_TRUE(namespaces.present().empty());
  // Its successor in the same cgroup is followed.
  Container second;
  ASSERT_TRUE(second.in_own_netns());
  {
    std::ofstream procs(pod.root / "container-a" / "cgroup.procs");
    procs << second.pid() << "\n";
  }
  EXPECT_TRUE(namespaces.refresh({port}));
  EXPECT_EQ(namespaces.inode_of(port), netns_inode_of(second.pid()));
  EXPECT_EQ(namespaces.found(*port.netns), std::optional<bool>(true));
}

TEST(ServiceNamespaces, AListenerIsTheOneNamespaceListeningOnThePort) {
  const uint16_t port = free_port();
  ASSERT_NE(port, 0);
  auto none = namespace_listening_on(port);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().message, "no network namespace listens on port " + std::to_string(port));

  Container pod(port);
  ASSERT_TRUE(pod.in_own_netns()) << "the test needs a namespace of its own, listening";
  auto found = namespace_listening_on(port);
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(found->inode, netns_inode_of(pod.pid()));

  Container other(port);
  ASSERT_TRUE(other.in_own_netns());
  auto two = namespace_listening_on(port);
  ASSERT_FALSE(two);
  EXPECT_EQ(two.error().message.rfind(
                "2 network namespaces listen on port " + std::to_string(port) + " (net:[", 0),
            0U)
      << two.error().message;
  EXPECT_NE(two.error().message.find("): name the service's with netns, pid or cgroup"),
            std::string::npos);
}

TEST(ServiceNamespaces, AListenerIsSearchedForAtMostOnceASecondAndFollowed) {
  using Clock = ServiceNamespaces::Clock;
  const uint16_t number = free_port();
  ASSERT_NE(number, 0);
  const auto port = port_in(number, {NetnsRef::Kind::kListener, "", 0, number});
  ServiceNamespaces namespaces;
  auto first = std::make_unique<Container>(number);
  ASSERT_TRUE(first->in_own_netns());
  const auto t0 = Clock::now();
  EXPECT_TRUE(namespaces.refresh({port}, t0));
  EXPECT_EQ(namespaces.inode_of(port), netns_inode_of(first->pid()));
  // The pod goes: its namespace file with it, so no second's wait.
  first.reset();
  EXPECT_TRUE(namespaces.refresh({port}, t0 + std::chrono::milliseconds(100)));
  EXPECT_EQ(namespaces.inode_of(port), static_cast<uint32_t>(EDGESHED_NETNS_NONE));
  // Its successor listens: found at the next search, a second after the last.
  Container second(number);
  ASSERT_TRUE(second.in_own_netns());
  EXPECT_FALSE(namespaces.refresh({port}, t0 + std::chrono::milliseconds(600)));
  EXPECT_TRUE(namespaces.refresh({port}, t0 + std::chrono::milliseconds(1200)));
  EXPECT_EQ(namespaces.inode_of(port), netns_inode_of(second.pid()));
}

// A service found by its listener is timed at the cgroup of the process
// that holds the listening socket: the one its accepted sockets are in.
TEST(ServiceNamespaces, AListenersCgroupIsTheCgroupOfItsHolder) {
  std::string why;
  const auto cgroup = TestCgroup::create(&why);
  if (!cgroup) GTEST_SKIP() << why;
  const uint16_t number = free_port();
  ASSERT_NE(number, 0);
  const auto port = port_in(number, {NetnsRef::Kind::kListener, "", 0, number});
  ServiceNamespaces namespaces;
  EXPECT_EQ(namespaces.listener_cgroup(port), nullptr) << "nothing found yet";
  const auto pod = cgroup->inside([&] { return std::make_unique<Container>(number); });
  ASSERT_TRUE(pod->in_own_netns());
  EXPECT_TRUE(namespaces.refresh({port}));
  const std::string* found = namespaces.listener_cgroup(port);
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(*found, cgroup->path());
  // Named by its namespace instead: no cgroup to time it at.
  const auto by_path = port_in(
      number, {NetnsRef::Kind::kPath, "/proc/" + std::to_string(pod->pid()) + "/ns/net", 0, 0});
  EXPECT_TRUE(namespaces.refresh({by_path}));
  EXPECT_EQ(namespaces.listener_cgroup(by_path), nullptr);
}

TEST(ServiceNamespaces, SaysWhyThereIsNone) {
  auto not_ns = resolve_netns({NetnsRef::Kind::kPath, "/proc/self/status", 0, 0});
  ASSERT_FALSE(not_ns);
  EXPECT_EQ(not_ns.error().message, "/proc/self/status is not a namespace file");
  auto missing = resolve_netns({NetnsRef::Kind::kPath, "/run/netns/edgeshed-no-such-ns", 0, 0});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "/run/netns/edgeshed-no-such-ns: No such file or directory");
  auto no_cgroup = resolve_netns({NetnsRef::Kind::kCgroup, "/sys/fs/cgroup/edgeshed-none", 0, 0});
  ASSERT_FALSE(no_cgroup);
  EXPECT_EQ(no_cgroup.error().message, "no such cgroup /sys/fs/cgroup/edgeshed-none");
  FakePodCgroup empty(::getpid());
  std::filesystem::remove_all(empty.root / "container-a");
  auto no_process = resolve_netns({NetnsRef::Kind::kCgroup, empty.root.string(), 0, 0});
  ASSERT_FALSE(no_process);
  EXPECT_EQ(no_process.error().message, "no process in the cgroup " + empty.root.string());
}

TEST(ServiceNamespaces, AChangeIsReportedOnceAndAGoneNamespaceCountsNothing) {
  ServiceNamespaces namespaces;
  const config::PortConfig host;  // the interface's namespace
  const auto here = port_in(8080, {NetnsRef::Kind::kPath, "/proc/self/ns/net", 0, 0});
  const auto gone = port_in(8081, {NetnsRef::Kind::kPath, "/run/netns/edgeshed-no-such-ns", 0, 0});
  EXPECT_TRUE(namespaces.refresh({host, here, gone}));
  EXPECT_FALSE(namespaces.refresh({host, here, gone}));
  EXPECT_EQ(namespaces.inode_of(host), 0u);
  // The daemon's own namespace is the interface's: its port is a host's,
  // and nothing is walked there twice.
  EXPECT_EQ(namespaces.inode_of(here), 0u);
  EXPECT_EQ(namespaces.namespace_of(here), nullptr);
  EXPECT_EQ(namespaces.inode_of(gone), static_cast<uint32_t>(EDGESHED_NETNS_NONE));
  EXPECT_TRUE(namespaces.present().empty());
  EXPECT_EQ(namespaces.found(*here.netns), std::optional<bool>(true));
  EXPECT_EQ(namespaces.found(*gone.netns), std::optional<bool>(false));
  // A port no longer configured is forgotten.
  EXPECT_TRUE(namespaces.refresh({host, gone}));
  EXPECT_TRUE(namespaces.present().empty());
  EXPECT_EQ(namespaces.found(*here.netns), std::nullopt);
}

}  // namespace
}  // namespace edgeshed::daemon
