{
  "targets": [
    {
      "target_name": "tailor_native",
      "sources": ["src/addon.cc", "src/convert.cc", "src/tensors.cc", "src/autograd.cc", "src/device.cc", "src/distributed.cc", "src/graphs.cc", "src/jpeg.cc", "src/opcount.cc"],
      "include_dirs": [
        "<!(node -p \"require('node-addon-api').include_dir\")",
        "<!@(node resolve-libtorch.mjs include_dirs)",
        "<!@(node resolve-jpeg.mjs include_dirs)"
      ],
      "defines": ["NAPI_VERSION=8", "NODE_ADDON_API_CPP_EXCEPTIONS", "<!@(node resolve-libtorch.mjs defines)", "<!@(node resolve-jpeg.mjs defines)"],
      "cflags!": ["-fno-exceptions", "-fno-rtti"],
      "cflags_cc!": ["-fno-exceptions", "-fno-rtti", "-std=gnu++17", "-std=gnu++14"],
      "cflags_cc": ["<!(node resolve-libtorch.mjs cxx_std)", "-fexceptions", "-frtti", "-O2", "-Wno-unused-parameter", "-Wno-deprecated-declarations"],
      "libraries": ["<!@(node resolve-libtorch.mjs libraries)", "<!@(node resolve-jpeg.mjs libraries)"]
    }
  ]
}
