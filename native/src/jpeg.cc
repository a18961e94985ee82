// JPEG decoding for the image-list pipeline: libjpeg-turbo decodes only the rows and columns a
// crop box needs (at 1/2, 1/4 or 1/8 scale when the box is that much larger than the output),
// and the box is resampled to the output size with PIL's antialiased bilinear filter, the resize
// torchvision's RandomResizedCrop and Resize run on PIL images. One call per image, synchronous:
// the pipeline calls it from its worker threads. Built only where libjpeg's headers are found
// (TAILOR_JPEG, native/resolve-jpeg.mjs); elsewhere jpegInfo() says so and the pipeline decodes
// with sharp.
#include <napi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#ifdef TAILOR_JPEG
#include <csetjmp>
#include <cstdio>

#include <jerror.h>
#include <jpeglib.h>
#endif

namespace tailor {

#ifdef TAILOR_JPEG
namespace {

struct ErrorManager {
  jpeg_error_mgr pub;
  jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
  bool truncated;
};

void onError(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  longjmp(err->jump, 1);
}

// Warnings are ignored as sharp's failOn 'error' ignores them, but for the end of the data
// arriving early: a truncated file is an error there too.
void onMessage(j_common_ptr cinfo, int level) {
  auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  if (level < 0 && cinfo->err->msg_code == JWRN_JPEG_EOF) err->truncated = true;
}

// A progressive JPEG can hold thousands of tiny scans that take minutes to decode (libjpeg-turbo's
// TJFLAG_LIMITSCANS guards the same way): more than 500 is an error, not a hang.
constexpr int MAX_SCANS = 500;
void onProgress(j_common_ptr cinfo) {
  auto* d = reinterpret_cast<j_decompress_ptr>(cinfo);
  if (cinfo->is_decompressor && d->input_scan_number > MAX_SCANS) {
    auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
    std::snprintf(err->message, sizeof err->message, "a progressive JPEG of more than %d scans", MAX_SCANS);
    longjmp(err->jump, 1);
  }
}

// PIL's precompute_coeffs for the bilinear (triangle) filter: for each output pixel the first
// input pixel and the normalized weights over [in0, in1) of an input of `inSize` pixels.
struct Coefficients {
  std::vector<int> first;
  std::vector<int> count;
  std::vector<double> weights;
  int stride = 0;
};

Coefficients bilinearCoefficients(int inSize, double in0, double in1, int outSize) {
  Coefficients c;
  const double scale = (in1 - in0) / outSize;
  const double filterScale = std::max(scale, 1.0);
  const double support = filterScale;  // the triangle's support is 1
  c.stride = static_cast<int>(std::ceil(support)) * 2 + 1;
  c.first.resize(outSize);
  c.count.resize(outSize);
  c.weights.assign(static_cast<size_t>(outSize) * c.stride, 0.0);
  for (int o = 0; o < outSize; o++) {
    const double center = in0 + (o + 0.5) * scale;
    int lo = std::max(static_cast<int>(center - support + 0.5), 0);
    int hi = std::min(static_cast<int>(center + support + 0.5), inSize);
    int n = std::min(hi - lo, c.stride);
    double total = 0;
    double* w = &c.weights[static_cast<size_t>(o) * c.stride];
    for (int i = 0; i < n; i++) {
      double t = std::abs((i + lo - center + 0.5) / filterScale);
      w[i] = t < 1 ? 1 - t : 0;
      total += w[i];
    }
    if (total > 0)
      for (int i = 0; i < n; i++) w[i] /= total;
    c.first[o] = lo;
    c.count[o] = std::max(n, 0);
  }
  return c;
}

inline uint8_t clampByte(double v) { return static_cast<uint8_t>(v <= 0 ? 0 : v >= 255 ? 255 : static_cast<int>(v + 0.5)); }

// PIL's two-pass bilinear resize of the box [bx0, bx1) x [by0, by1) of RGB rows (width x rowCount)
// to outW x outH, written to dst.
void resampleBilinear(const uint8_t* rows, int width, int rowCount, double bx0, double bx1, double by0, double by1,
                      int outW, int outH, uint8_t* dst) {
  const int stride = width * 3;
  Coefficients cx = bilinearCoefficients(width, bx0, bx1, outW);
  Coefficients cy = bilinearCoefficients(rowCount, by0, by1, outH);

  // Horizontal pass over the rows the vertical pass reads, then the vertical pass (as PIL).
  std::vector<uint8_t> horizontal(static_cast<size_t>(rowCount) * outW * 3, 0);
  int needLo = rowCount, needHi = 0;
  for (int o = 0; o < outH; o++) {
    needLo = std::min(needLo, cy.first[o]);
    needHi = std::max(needHi, cy.first[o] + cy.count[o]);
  }
  for (int r = needLo; r < needHi; r++) {
    const uint8_t* in = rows + static_cast<size_t>(r) * stride;
    uint8_t* out = horizontal.data() + static_cast<size_t>(r) * outW * 3;
    for (int o = 0; o < outW; o++) {
      const double* w = &cx.weights[static_cast<size_t>(o) * cx.stride];
      double a = 0, b = 0, c = 0;
      const uint8_t* p = in + static_cast<size_t>(cx.first[o]) * 3;
      for (int i = 0; i < cx.count[o]; i++, p += 3) {
        a += w[i] * p[0];
        b += w[i] * p[1];
        c += w[i] * p[2];
      }
      // PIL rounds to 8 bits between the passes
      out[o * 3] = clampByte(a);
      out[o * 3 + 1] = clampByte(b);
      out[o * 3 + 2] = clampByte(c);
    }
  }
  const int rowLength = outW * 3;
  std::vector<float> acc(rowLength);
  for (int o = 0; o < outH; o++) {
    const double* w = &cy.weights[static_cast<size_t>(o) * cy.stride];
    std::fill(acc.begin(), acc.end(), 0.f);
    // row by row, so that the inner loop runs along memory
    for (int i = 0; i < cy.count[o]; i++) {
      const float wi = static_cast<float>(w[i]);
      const uint8_t* src = horizontal.data() + static_cast<size_t>(cy.first[o] + i) * rowLength;
      for (int x = 0; x < rowLength; x++) acc[x] += wi * src[x];
    }
    uint8_t* d = dst + static_cast<size_t>(o) * rowLength;
    for (int x = 0; x < rowLength; x++) d[x] = clampByte(acc[x]);
  }
}

// The rows of a JPEG a crop box needs, decoded to RGB (the columns widened to whole iMCUs).
struct BoxRows {
  std::vector<uint8_t> rows;
  int width = 0;     // pixels per row
  int rowCount = 0;  // rows
  int x0 = 0;        // the first column's position in the (scaled) image
  int rowStart = 0;  // the first row's position in the (scaled) image
  unsigned denom = 1;  // decoded at 1/denom scale
  bool cmyk = false;   // a CMYK / YCCK JPEG: nothing decoded
};

// Decodes into `out` what the box (and the resample filter's reach around it) needs; returns
// the failure ("" for none). The only function here with a setjmp: libjpeg's errors longjmp to it.
std::string decodeBoxRows(const uint8_t* data, size_t size, int left, int top, int boxW, int boxH, int outW,
                          int outH, double maxPixels, BoxRows& out) {
  // Declared before setjmp: what the code after a longjmp back to it reads (`out` is the caller's).
  jpeg_decompress_struct cinfo;
  ErrorManager err;
  std::string failure;
  cinfo.err = jpeg_std_error(&err.pub);
  err.pub.error_exit = onError;
  err.pub.emit_message = onMessage;
  err.truncated = false;
  jpeg_progress_mgr progress;
  progress.progress_monitor = onProgress;
  jpeg_create_decompress(&cinfo);
  cinfo.progress = &progress;
  if (setjmp(err.jump)) {
    failure = err.message;
  } else {
    jpeg_mem_src(&cinfo, data, static_cast<unsigned long>(size));
    jpeg_read_header(&cinfo, TRUE);
    if (static_cast<double>(cinfo.image_width) * cinfo.image_height > maxPixels) {
      failure = "the image has " + std::to_string(cinfo.image_width) + " x " + std::to_string(cinfo.image_height) +
                " pixels, more than the limit";
    } else if (left + boxW > static_cast<int>(cinfo.image_width) || top + boxH > static_cast<int>(cinfo.image_height)) {
      failure = "the box lies outside the image";
    } else if (cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK) {
      out.cmyk = true;
    } else {
      // shrink on load by 2, 4 or 8 while the scaled box stays at least the output size
      unsigned denom = 1;
      while (denom < 8 && boxW / (2.0 * denom) >= outW && boxH / (2.0 * denom) >= outH) denom *= 2;
      cinfo.scale_num = 1;
      cinfo.scale_denom = denom;
      cinfo.out_color_space = JCS_RGB;
      cinfo.dct_method = JDCT_ISLOW;
      jpeg_start_decompress(&cinfo);
      out.denom = denom;
      const int scaledW = static_cast<int>(cinfo.output_width);
      const int scaledH = static_cast<int>(cinfo.output_height);
      const double k = 1.0 / denom;  // the box's scale in the decoded rows
      // the scaled box's rows with the filter's reach, and its columns (widened to iMCUs)
      const double fy = (boxH * k) / outH;
      const int reachY = static_cast<int>(std::ceil(std::max(fy, 1.0))) + 1;
      const int rowStart = std::max(0, static_cast<int>(std::floor(top * k)) - reachY);
      const int rowEnd = std::min(scaledH, static_cast<int>(std::ceil((top + boxH) * k)) + reachY);
      const int rowCount = rowEnd - rowStart;
      const double fx = (boxW * k) / outW;
      const int reachX = static_cast<int>(std::ceil(std::max(fx, 1.0))) + 1;
      JDIMENSION cropX = static_cast<JDIMENSION>(std::max(0, static_cast<int>(std::floor(left * k)) - reachX));
      JDIMENSION cropEnd = static_cast<JDIMENSION>(std::min(scaledW, static_cast<int>(std::ceil((left + boxW) * k)) + reachX));
      JDIMENSION cropW = cropEnd - cropX;
      if (cropX > 0 || cropW < static_cast<JDIMENSION>(scaledW)) jpeg_crop_scanline(&cinfo, &cropX, &cropW);
      out.x0 = static_cast<int>(cropX);
      out.rowStart = rowStart;
      out.rowCount = rowCount;
      out.width = static_cast<int>(cinfo.output_width);
      const size_t stride = static_cast<size_t>(out.width) * 3;
      out.rows.resize(static_cast<size_t>(rowCount) * stride);
      if (rowStart > 0) jpeg_skip_scanlines(&cinfo, static_cast<JDIMENSION>(rowStart));
      while (static_cast<int>(cinfo.output_scanline) < rowStart + rowCount) {
        JSAMPROW row = out.rows.data() + static_cast<size_t>(cinfo.output_scanline - rowStart) * stride;
        if (jpeg_read_scanlines(&cinfo, &row, 1) != 1) break;
      }
      if (err.truncated) failure = "premature end of JPEG data (a truncated file)";
      // the rows below the box are not needed: stop without decoding them
      jpeg_abort_decompress(&cinfo);
    }
  }
  jpeg_destroy_decompress(&cinfo);
  return failure;
}

}  // namespace

// jpegDecodeBox(bytes, left, top, width, height, outWidth, outHeight, maxPixels)
//   -> Uint8Array of outHeight x outWidth x 3 (RGB), or null for a colour space the decoder does
//      not turn into RGB (CMYK / YCCK: the caller decodes those otherwise).
// The box is in the image's pixels and must lie inside it. Errors (not a JPEG, corrupt or
// truncated data, more than maxPixels pixels) throw with libjpeg's message.
Napi::Value JpegDecodeBox(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 8 || !info[0].IsTypedArray())
    throw Napi::TypeError::New(env, "jpegDecodeBox(bytes, left, top, width, height, outWidth, outHeight, maxPixels)");
  Napi::Uint8Array bytes = info[0].As<Napi::Uint8Array>();
  const int left = info[1].As<Napi::Number>().Int32Value();
  const int top = info[2].As<Napi::Number>().Int32Value();
  const int boxW = info[3].As<Napi::Number>().Int32Value();
  const int boxH = info[4].As<Napi::Number>().Int32Value();
  const int outW = info[5].As<Napi::Number>().Int32Value();
  const int outH = info[6].As<Napi::Number>().Int32Value();
  const double maxPixels = info[7].As<Napi::Number>().DoubleValue();
  if (outW < 1 || outH < 1 || outW > 16384 || outH > 16384 || boxW < 1 || boxH < 1 || left < 0 || top < 0)
    throw Napi::RangeError::New(env, "jpegDecodeBox: the box's corner must be >= 0, its size and the output's >= 1");

  BoxRows decoded;
  const std::string failure = decodeBoxRows(bytes.Data(), bytes.ByteLength(), left, top, boxW, boxH, outW, outH,
                                            maxPixels, decoded);
  if (!failure.empty()) throw Napi::Error::New(env, "JPEG: " + failure);
  if (decoded.cmyk) return env.Null();

  Napi::Uint8Array result = Napi::Uint8Array::New(env, static_cast<size_t>(outW) * outH * 3);
  // the box in the decoded rows' coordinates (floats: the scale need not divide it)
  const BoxRows& d = decoded;
  const double k = 1.0 / d.denom;
  resampleBilinear(d.rows.data(), d.width, d.rowCount, left * k - d.x0, (left + boxW) * k - d.x0,
                   top * k - d.rowStart, (top + boxH) * k - d.rowStart, outW, outH, result.Data());
  return result;
}
#endif

Napi::Value JpegInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object out = Napi::Object::New(env);
#ifdef TAILOR_JPEG
  out.Set("available", true);
  out.Set("libjpeg", JPEG_LIB_VERSION);
#else
  out.Set("available", false);
  out.Set("reason", "the addon was built without libjpeg's headers (Debian: libjpeg62-turbo-dev)");
#endif
  return out;
}

void initJpeg(Napi::Env env, Napi::Object exports) {
  exports.Set("jpegInfo", Napi::Function::New(env, JpegInfo));
#ifdef TAILOR_JPEG
  exports.Set("jpegDecodeBox", Napi::Function::New(env, JpegDecodeBox));
#endif
}

}  // namespace tailor
