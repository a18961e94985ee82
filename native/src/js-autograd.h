// JavaScript inside libtorch's autograd engine: tensor hooks and custom Functions written in
// JavaScript (js-autograd.cc).
#pragma once
#include <napi.h>

#include <functional>
#include <string>

namespace torch {
namespace autograd {
struct Node;
}
}  // namespace torch

namespace tailor {

void initJsAutograd(Napi::Env env, Napi::Object exports);

// Runs an engine call (backward, autograd.grad). While JavaScript hooks or Functions exist it runs
// on a helper thread and this (the JavaScript) thread serves the engine's calls into JavaScript
// until it ends; otherwise it runs here directly. A JavaScript error thrown by a hook or a
// backward is rethrown as it was thrown.
void runEngine(Napi::Env env, const std::function<void()>& fn);

// The name a JavaScript Function gave its backward node, or "" for any other node.
std::string jsFunctionName(const torch::autograd::Node* node);

}  // namespace tailor
