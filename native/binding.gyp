{
  "targets": [
    {
      "target_name": "tailor_native",
      "sources": ["src/addon.cc", "src/convert.cc", "src/tensors.cc", "src/autograd.cc"],
      "include_dirs": [
        "<!(node -p \"require('node-addon-api').include_dir\")",
        "/usr/include",
        "/usr/include/torch/csrc/api/include"
      ],
      "defines": ["NAPI_VERSION=8", "NODE_ADDON_API_CPP_EXCEPTIONS", "_GLIBCXX_USE_CXX11_ABI=1"],
      "cflags!": ["-fno-exceptions", "-fno-rtti"],
      "cflags_cc!": ["-fno-exceptions", "-fno-rtti", "-std=gnu++17", "-std=gnu++14"],
      "cflags_cc": ["-std=c++17", "-fexceptions", "-frtti", "-O2", "-Wno-unused-parameter", "-Wno-deprecated-declarations"],
      "libraries": ["-Wl,--no-as-needed", "-ltorch", "-ltorch_cpu", "-lc10"]
    }
  ]
}
