// The control socket: one request, one reply, root-only file, bad input.
#include "ipc/control_socket.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <thread>

namespace edgeshed::ipc {
namespace {

class ControlSocketTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("edgeshed-ctl-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "control.sock").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path dir_;
  std::string path_;
};

TEST_F(ControlSocketTest, RequestAndReply) {
  auto server = ControlServer::listen(path_);
  ASSERT_TRUE(server) << server.error().message;
  struct stat st {};
  ASSERT_EQ(stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  std::thread serve([&] {
    pollfd p{server->fd(), POLLIN, 0};
    ASSERT_EQ(poll(&p, 1, 5000), 1);
    server->serve_one([](const nlohmann::json& r) {
      return nlohmann::json{{"ok", true}, {"echo", r["op"]}};
    });
  });
  auto reply = control_request(path_, {{"op", "pin"}});
  serve.join();
  ASSERT_TRUE(reply) << reply.error().message;
  EXPECT_EQ((*reply)["echo"], "pin");
}

TEST_F(ControlSocketTest, MalformedRequestGetsAnErrorReply) {
  auto server = ControlServer::listen(path_);
  ASSERT_TRUE(server);
  std::thread serve([&] {
    pollfd p{server->fd(), POLLIN, 0};
    ASSERT_EQ(poll(&p, 1, 5000), 1);
    server->serve_one([](const nlohmann::json&) { return nlohmann::json{{"ok", true}}; });
  });
  int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  strncpy(addr.sun_path, path_.c_str(), sizeof(addr.sun_path) - 1);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_GT(send(fd, "{not json", 9, 0), 0);
  char buf[512] = {};
  ASSERT_GT(recv(fd, buf, sizeof(buf) - 1, 0), 0);
  close(fd);
  serve.join();
  auto reply = nlohmann::json::parse(buf);
  EXPECT_FALSE(reply["ok"].get<bool>());
  EXPECT_NE(reply["error"].get<std::string>().find("malformed"), std::string::npos);
}

// A client that gave up has reported a failure: the daemon, once it reads
// the request (after a SIGSTOP, say), must not apply it behind its back.
TEST_F(ControlSocketTest, ARequestReadAfterItsClientGaveUpIsNotApplied) {
  auto server = ControlServer::listen(path_);
  ASSERT_TRUE(server);
  auto reply = control_request(path_, {{"op", "mode"}}, std::chrono::milliseconds(100));
  ASSERT_FALSE(reply);
  EXPECT_NE(reply.error().message.find("no reply from the daemon"), std::string::npos);
  bool applied = false;
  server->serve_one([&](const nlohmann::json&) {
    applied = true;
    return nlohmann::json{{"ok", true}};
  });
  EXPECT_FALSE(applied);
}

TEST_F(ControlSocketTest, TheHandlerDoesNotSeeTheDeadline) {
  auto server = ControlServer::listen(path_);
  ASSERT_TRUE(server);
  nlohmann::json seen;
  std::thread serve([&] {
    pollfd p{server->fd(), POLLIN, 0};
    ASSERT_EQ(poll(&p, 1, 5000), 1);
    server->serve_one([&](const nlohmann::json& r) {
      seen = r;
      return nlohmann::json{{"ok", true}};
    });
  });
  auto reply = control_request(path_, {{"op", "pin"}, {"level", "high"}});
  serve.join();
  ASSERT_TRUE(reply) << reply.error().message;
  EXPECT_EQ(seen, (nlohmann::json{{"op", "pin"}, {"level", "high"}}));
}

TEST_F(ControlSocketTest, NoDaemonIsAClearError) {
  auto reply = control_request(path_, {{"op", "ping"}});
  ASSERT_FALSE(reply);
  EXPECT_NE(reply.error().message.find("cannot reach the daemon"), std::string::npos);
}

TEST_F(ControlSocketTest, ServerRemovesItsSocketFile) {
  {
    auto server = ControlServer::listen(path_);
    ASSERT_TRUE(server);
    EXPECT_TRUE(std::filesystem::exists(path_));
  }
  EXPECT_FALSE(std::filesystem::exists(path_));
}

}  // namespace
}  // namespace edgeshed::ipc
