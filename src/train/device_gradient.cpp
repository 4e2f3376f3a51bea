// DeviceGradient (include/nep/train/device_gradient.hpp): the packed, device-resident copy of the frames'
// pair bases, its uploads through pinned staging, and the per-batch launches of the kernels in
// device_gradient_kernel.hpp.
#include "nep/train/device_gradient.hpp"

#include <algorithm>
#include <cstring>

#include "device_gradient_kernel.hpp"
#include "nep/error.hpp"
#include "nep/timing.hpp"
#include "nep/train/train_gradient.hpp"

namespace nep {

namespace {

using namespace device_train;
constexpr int kBlock = 64;  // atoms per gradient block (as the host path's tasks)
// The per-atom kernels are long and register-heavy (ptxas, sm_80, with these bounds: backward 240
// registers and a 4 KB stack frame, forward 200 and 2 KB, no spills) and a batch has few atoms
// (4 PbTe frames: 1000): at most 64 threads a GPU block spreads a batch over 16+ multiprocessors.
using PerAtomBounds = Kokkos::LaunchBounds<64, 1>;

// Host side of a packed array: the queued values, appended to the device view on flush.
template <class T>
struct Packed {
  Packed(const char* name, DView<T> TrainKernel::*kernel_view, bool csr_begins = false)
      : label(name), slot(kernel_view), begin_array(csr_begins) {}
  const char* label;
  DView<T> TrainKernel::*slot;  // the kernel's handle on d
  bool begin_array;             // CSR begins: the first queued entry overwrites the old sentinel
  DView<T> d;
  int64_t used = 0;       // entries on the device
  std::vector<T> queued;  // appended next flush
  PView<T> stage;         // pinned staging (kept until the copy has completed)

  // appends the queued entries (asynchronously, on exec's stream) and hands d to the kernel
  void flush(const ExecSpace& exec, TrainKernel& k) {
    if (!queued.empty()) append(exec);
    k.*slot = d;
  }
  void append(const ExecSpace& exec) {
    const int64_t at = begin_array && used > 0 ? used - 1 : used;
    const int64_t need = at + static_cast<int64_t>(queued.size());
    if (!d.data()) {
      d = DView<T>(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), std::max<int64_t>(need, 1));
    } else if (need > static_cast<int64_t>(d.extent(0))) {
      Kokkos::resize(d, std::max<int64_t>(need, 2 * static_cast<int64_t>(d.extent(0))));
    }
    if (stage.extent(0) < queued.size())
      stage = PView<T>(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label) + ":stage"), queued.size());
    std::memcpy(stage.data(), queued.data(), queued.size() * sizeof(T));
    const std::pair<int64_t, int64_t> dst(at, need), src(0, static_cast<int64_t>(queued.size()));
    Kokkos::deep_copy(exec, Kokkos::subview(d, dst), Kokkos::subview(stage, src));
    used = need;
    queued.clear();
  }
  size_t bytes() const { return d.extent(0) * sizeof(T); }
};

template <class T>
void ensure_size(DView<T>& v, int64_t n, const char* label) {
  if (static_cast<int64_t>(v.extent(0)) < n) v = DView<T>(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), n);
}

// room for n atoms of `entries` each (contents dropped when it grows)
void ensure_size(AtomArray& a, int64_t n, int entries, bool atom_fastest, const char* label) {
  const int64_t cap = a.data.extent(0) / std::max(entries, 1);
  if (cap < n) {
    a.data = DView<double>(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), n * entries);
    a.atom_step = atom_fastest ? 1 : entries;
    a.entry_step = atom_fastest ? n : 1;
  }
}

template <class T>
void to_device(const ExecSpace& exec, DView<T>& d, PView<T>& stage, const T* src, int64_t n, const char* label) {
  ensure_size(d, n, label);
  if (static_cast<int64_t>(stage.extent(0)) < n) stage = PView<T>(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), n);
  std::memcpy(stage.data(), src, n * sizeof(T));
  Kokkos::deep_copy(exec, Kokkos::subview(d, std::pair<int64_t, int64_t>(0, n)),
                    Kokkos::subview(stage, std::pair<int64_t, int64_t>(0, n)));
}

}  // namespace

std::string device_execution_space() { return ExecSpace::name(); }

struct DeviceGradient::Impl {
  TrainKernel k{};
  bool atom_fastest = false;
  ExecSpace exec;
  // packed frames (the label names the device view; the member pointer, the kernel's handle)
#define NEP_PACKED(T, name, ...) Packed<T> name{"nep::train::" #name, &TrainKernel::name, ##__VA_ARGS__}
  NEP_PACKED(int, type);
  NEP_PACKED(int, r_owner);
  NEP_PACKED(int, r_type);
  NEP_PACKED(int, a_owner);
  NEP_PACKED(int, a_type);
  NEP_PACKED(double, B);
  NEP_PACKED(double, r_geom);
  NEP_PACKED(double, r_fp);
  NEP_PACKED(double, a_geom);
  NEP_PACKED(double, a_f);
  NEP_PACKED(double, a_fp);
  NEP_PACKED(double, a_Y);
  NEP_PACKED(double, a_dY);
  NEP_PACKED(double, zbl_f);
  NEP_PACKED(int64_t, r_begin, true);
  NEP_PACKED(int64_t, a_begin, true);
  NEP_PACKED(int64_t, ri_begin, true);
  NEP_PACKED(int64_t, ai_begin, true);
  NEP_PACKED(int64_t, ri_pair);
  NEP_PACKED(int64_t, ai_pair);
#undef NEP_PACKED
  template <class F>
  void for_each_packed(F&& f) {
    for (auto* p : {&type, &r_owner, &r_type, &a_owner, &a_type}) f(*p);
    for (auto* p : {&B, &r_geom, &r_fp, &a_geom, &a_f, &a_fp, &a_Y, &a_dY, &zbl_f}) f(*p);
    for (auto* p : {&r_begin, &a_begin, &ri_begin, &ai_begin, &ri_pair, &ai_pair}) f(*p);
  }
  int64_t n_atoms = 0, n_rpairs = 0, n_apairs = 0;  // including the queued frames
  struct Frame {
    int64_t atom0;
    int nlocal;
    double zbl_energy, zbl_virial[9];
  };
  std::vector<Frame> frames;
  std::vector<int> slot;  // frame id -> index into frames (-1: not uploaded)
  // per-batch staging
  PView<int64_t> s_atom, s_shift;
  PView<int> s_frame, s_block;
  PView<double> s_ann, s_c, s_qsc, s_cA, s_wE, s_delta, s_Delta, out;
  std::vector<int> batch;
  int64_t batch_atoms = 0;
  bool have_forward = false;

  void flush() {
    for_each_packed([&](auto& p) { p.flush(exec, k); });
    ensure_size(k.r_force, 3 * std::max<int64_t>(n_rpairs, 1), "nep::train::r_force");
    ensure_size(k.a_force, 3 * std::max<int64_t>(n_apairs, 1), "nep::train::a_force");
  }
};

DeviceGradient::DeviceGradient(const Model& m, Layout layout) : impl_(new Impl) {
  impl_->atom_fastest = layout == Layout::AtomFastest ||
                        (layout == Layout::Auto && !Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible);
  const GradientKernel host(m);  // validates the model (NEP3/NEP4, supported channels)
  TrainKernel& k = impl_->k;
  static_cast<ModelSizes&>(k) = m.sizes();
  k.KRp = radial_row_stride(k.KR);
  k.A = (k.D + 2) * k.H;
  k.b1 = m.ann_b1_offset();
  k.P = host.num_parameters();
  k.Pa = k.A + k.NR * k.KR * k.T + k.NA * k.KA * k.T;
  k.NCH = k.L3 + (k.q222 ? 1 : 0) + (k.q1111 ? 1 : 0);
  if (k.NCH > kMaxAngularChannels || k.NR + k.NA * k.NCH != k.D || k.S > kNumAngularEntries)
    throw Error("DeviceGradient: descriptor layout not supported by the device kernels");
  const int Wf = 2 * k.NA * k.S + 2 * k.D + k.H + k.T * k.KR;
  const int Wb = k.T * k.KR + 4 * k.NA * k.S + 4 * k.D;
  k.Wsz = std::max(Wf, Wb);
  for (int x = 0; x < 5; ++x) k.c4b[x] = kC4B[x];
  for (int x = 0; x < 3; ++x) k.c5b[x] = kC5B[x];
  // per parameter: which atoms contribute (type) and which entry of their row
  const int n_ann = m.num_ann_parameters() - 1, n_cR = m.num_c_radial(), TT = k.T * k.T;
  std::vector<int> req(k.P), col(k.P);
  for (int p = 0; p < k.P; ++p) {
    if (p < n_ann) {
      const int net = m.version == 3 ? 0 : p / k.A;
      req[p] = m.version == 3 ? -1 : net;
      col[p] = p - net * k.A;
    } else {
      const bool radial = p < n_ann + n_cR;
      const int idx = p - n_ann - (radial ? 0 : n_cR);
      const int nk = idx / TT, ti = (idx % TT) / k.T, t = idx % k.T;
      req[p] = ti;
      col[p] = k.A + (radial ? 0 : k.NR * k.KR * k.T) + nk * k.T + t;
    }
  }
  PView<int> s_req, s_row;
  PView<double> s_c3b;
  to_device(impl_->exec, k.p_req, s_req, req.data(), k.P, "nep::train::p_req");
  to_device(impl_->exec, k.p_row, s_row, col.data(), k.P, "nep::train::p_row");
  to_device(impl_->exec, k.c3b, s_c3b, angular_tables().c3b, kNumAngularEntries, "nep::train::c3b");
  impl_->exec.fence();  // before the staging buffers go
}

DeviceGradient::~DeviceGradient() = default;

bool DeviceGradient::resident(int frame) const {
  return frame >= 0 && frame < static_cast<int>(impl_->slot.size()) && impl_->slot[frame] >= 0;
}

void DeviceGradient::upload(int frame, const PairBasis& pb) {
  Impl& im = *impl_;
  const TrainKernel& k = im.k;
  if (resident(frame)) return;
  if (pb.T != k.T || pb.KR != k.KR || pb.KRp != k.KRp || pb.KA != k.KA || pb.S != k.S)
    throw Error("DeviceGradient::upload: the pair basis does not match the model's sizes");
  const int n = pb.nlocal;
  const int64_t atom0 = im.n_atoms, r0 = im.n_rpairs, a0 = im.n_apairs;
  const int64_t nr = static_cast<int64_t>(pb.r_owner.size()), na = static_cast<int64_t>(pb.a_owner.size());
  auto append = [](auto& packed, const auto& src) { packed.queued.insert(packed.queued.end(), src.begin(), src.end()); };
  append(im.type, pb.type);
  append(im.B, pb.B);
  append(im.r_type, pb.r_type);
  append(im.a_type, pb.a_type);
  append(im.r_geom, pb.r_geom);
  append(im.r_fp, pb.r_fp);
  append(im.a_geom, pb.a_geom);
  append(im.a_f, pb.a_f);
  append(im.a_fp, pb.a_fp);
  append(im.a_Y, pb.a_Y);
  append(im.a_dY, pb.a_dY);
  if (k.zbl) {
    if (!pb.has_zbl || static_cast<int>(pb.zbl_force.size()) != 3 * n)
      throw Error("DeviceGradient::upload: ZBL model but the pair basis has no ZBL part");
    append(im.zbl_f, pb.zbl_force);
  }
  for (int64_t p = 0; p < nr; ++p) im.r_owner.queued.push_back(static_cast<int>(atom0 + pb.r_owner[p]));
  for (int64_t p = 0; p < na; ++p) im.a_owner.queued.push_back(static_cast<int>(atom0 + pb.a_owner[p]));
  // CSR begins (global), then the incoming pairs of each atom in pair order (counting sort)
  auto csr = [&](Packed<int64_t>& begin, Packed<int64_t>& in_begin, Packed<int64_t>& in_pair, const std::vector<int>& local_begin,
                 const std::vector<int>& owner, int64_t pair0) {
    if (!begin.queued.empty()) begin.queued.pop_back();  // the previous queued frame's sentinel
    for (int i = 0; i <= n; ++i) begin.queued.push_back(pair0 + local_begin[i]);
    std::vector<int64_t> count(n + 1, 0);
    for (int o : owner) ++count[o + 1];
    for (int i = 0; i < n; ++i) count[i + 1] += count[i];
    if (!in_begin.queued.empty()) in_begin.queued.pop_back();
    for (int i = 0; i <= n; ++i) in_begin.queued.push_back(pair0 + count[i]);
    std::vector<int64_t> list(owner.size());
    for (size_t p = 0; p < owner.size(); ++p) list[count[owner[p]]++] = pair0 + static_cast<int64_t>(p);
    in_pair.queued.insert(in_pair.queued.end(), list.begin(), list.end());
  };
  csr(im.r_begin, im.ri_begin, im.ri_pair, pb.r_begin, pb.r_owner, r0);
  csr(im.a_begin, im.ai_begin, im.ai_pair, pb.a_begin, pb.a_owner, a0);
  Impl::Frame fr{atom0, n, pb.zbl_energy, {}};
  for (int c = 0; c < 9; ++c) fr.zbl_virial[c] = pb.has_zbl ? pb.zbl_virial[c] : 0.0;
  if (!pb.has_zbl) fr.zbl_energy = 0.0;
  if (frame >= static_cast<int>(im.slot.size())) im.slot.resize(frame + 1, -1);
  im.slot[frame] = static_cast<int>(im.frames.size());
  im.frames.push_back(fr);
  im.n_atoms += n;
  im.n_rpairs += nr;
  im.n_apairs += na;
}

size_t DeviceGradient::device_bytes() const {
  Impl& im = *impl_;  // (for_each_packed is not const; nothing changes)
  size_t b = 0;
  im.for_each_packed([&](const auto& p) { b += p.bytes(); });
  const TrainKernel& k = im.k;
  for (auto* v : {&k.r_force, &k.a_force, &k.e_atom, &k.w_atom, &k.force, &k.partial, &k.delta})
    b += v->extent(0) * sizeof(double);
  b += (k.work.data.extent(0) + k.rows.data.extent(0)) * sizeof(double);
  return b;
}

void DeviceGradient::forward(const Model& m, const std::vector<int>& frames, double* energy, double* virial,
                             std::vector<double>& force) {
  Impl& im = *impl_;
  TrainKernel& k = im.k;
  im.exec.fence();  // the previous copies out of the pinned staging buffers are complete
  {
    ScopedStage stage("train:device_upload");
    im.flush();
  }
  ScopedStage stage("train:device_forward");
  const int nb = static_cast<int>(frames.size());
  // batch index: atoms of the frames in batch order, and fixed 64-atom blocks of each frame
  int64_t na = 0;
  for (int f : frames) {
    if (!resident(f)) throw Error("DeviceGradient::forward: frame " + std::to_string(f) + " was not uploaded");
    na += im.frames[im.slot[f]].nlocal;
  }
  std::vector<int64_t> atom(na), shift(nb);
  std::vector<int> bframe(na), block{0};
  int64_t pos = 0;
  for (int b = 0; b < nb; ++b) {
    const Impl::Frame& fr = im.frames[im.slot[frames[b]]];
    shift[b] = fr.atom0 - pos;
    for (int i = 0; i < fr.nlocal; ++i) {
      atom[pos + i] = fr.atom0 + i;
      bframe[pos + i] = b;
    }
    for (int i0 = 0; i0 < fr.nlocal; i0 += kBlock) block.push_back(static_cast<int>(pos + std::min(i0 + kBlock, fr.nlocal)));
    pos += fr.nlocal;
  }
  im.batch = frames;
  im.batch_atoms = na;
  k.n_blocks = static_cast<int>(block.size()) - 1;
  to_device(im.exec, k.batch_atom, im.s_atom, atom.data(), std::max<int64_t>(na, 1), "nep::train::batch_atom");
  to_device(im.exec, k.frame_shift, im.s_shift, shift.data(), std::max(nb, 1), "nep::train::frame_shift");
  to_device(im.exec, k.batch_frame, im.s_frame, bframe.data(), std::max<int64_t>(na, 1), "nep::train::batch_frame");
  to_device(im.exec, k.block_begin, im.s_block, block.data(), static_cast<int64_t>(block.size()), "nep::train::block_begin");
  // parameters: ann | c | q_scaler | angular c repacked per type pair [ti*T + tj][n*KA + k]
  const int T = k.T, NA = k.NA, KA = k.KA, n_cR = m.num_c_radial();
  std::vector<double> cA(static_cast<size_t>(T) * T * NA * KA);
  for (int n = 0; n < NA; ++n)
    for (int kk = 0; kk < KA; ++kk)
      for (int pr = 0; pr < T * T; ++pr) cA[pr * NA * KA + n * KA + kk] = m.c[n_cR + (n * KA + kk) * T * T + pr];
  to_device(im.exec, k.ann, im.s_ann, m.ann.data(), static_cast<int64_t>(m.ann.size()), "nep::train::ann");
  to_device(im.exec, k.c, im.s_c, m.c.data(), static_cast<int64_t>(m.c.size()), "nep::train::c");
  to_device(im.exec, k.qsc, im.s_qsc, m.q_scaler.data(), static_cast<int64_t>(m.q_scaler.size()), "nep::train::q_scaler");
  to_device(im.exec, k.cA_pair, im.s_cA, cA.data(), static_cast<int64_t>(cA.size()), "nep::train::cA_pair");
  ensure_size(k.e_atom, std::max<int64_t>(na, 1), "nep::train::e_atom");
  ensure_size(k.w_atom, 9 * std::max<int64_t>(na, 1), "nep::train::w_atom");
  ensure_size(k.force, 3 * std::max<int64_t>(na, 1), "nep::train::force");
  ensure_size(k.work, std::max<int64_t>(na, 1), k.Wsz, im.atom_fastest, "nep::train::work");
  if (na > 0) {
    Kokkos::parallel_for("nep::train::forward", Kokkos::RangePolicy<ExecSpace, TagForward, PerAtomBounds>(im.exec, 0, na), k);
    Kokkos::parallel_for("nep::train::gather", Kokkos::RangePolicy<ExecSpace, TagGather>(im.exec, 0, na), k);
  }
  // back: per-atom energies (na), virials (9 na), forces (3 na)
  const int64_t nout = 13 * na;
  if (static_cast<int64_t>(im.out.extent(0)) < nout) im.out = PView<double>("nep::train::out", nout);
  auto part = [&](int64_t a, int64_t b) { return Kokkos::subview(im.out, std::make_pair(a, b)); };
  auto dev = [](const DView<double>& v, int64_t n) { return Kokkos::subview(v, std::pair<int64_t, int64_t>(0, n)); };
  Kokkos::deep_copy(im.exec, part(0, na), dev(k.e_atom, na));
  Kokkos::deep_copy(im.exec, part(na, 10 * na), dev(k.w_atom, 9 * na));
  Kokkos::deep_copy(im.exec, part(10 * na, 13 * na), dev(k.force, 3 * na));
  im.exec.fence();
  force.assign(im.out.data() + 10 * na, im.out.data() + 13 * na);
  pos = 0;
  for (int b = 0; b < nb; ++b) {
    const Impl::Frame& fr = im.frames[im.slot[frames[b]]];
    double e = 0.0, w[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    for (int i = 0; i < fr.nlocal; ++i) {
      e += im.out(pos + i);
      for (int c = 0; c < 9; ++c) w[c] += im.out(na + 9 * (pos + i) + c);
    }
    energy[b] = e + fr.zbl_energy;
    for (int c = 0; c < 9; ++c) virial[9 * b + c] = w[c] + fr.zbl_virial[c];
    pos += fr.nlocal;
  }
  im.have_forward = true;
}

void DeviceGradient::gradient(const double* wE, const double* delta, const double* Delta, double* grad) {
  Impl& im = *impl_;
  TrainKernel& k = im.k;
  if (!im.have_forward) throw Error("DeviceGradient::gradient: no forward() on this batch");
  ScopedStage stage("train:device_backward");
  const int nb = static_cast<int>(im.batch.size());
  const int64_t na = im.batch_atoms;
  im.exec.fence();
  to_device(im.exec, k.wE, im.s_wE, wE, std::max(nb, 1), "nep::train::wE");
  to_device(im.exec, k.Delta, im.s_Delta, Delta, std::max(9 * nb, 1), "nep::train::Delta");
  to_device(im.exec, k.delta, im.s_delta, delta, std::max<int64_t>(3 * na, 1), "nep::train::delta");
  ensure_size(k.rows, std::max<int64_t>(na, 1), k.Pa, im.atom_fastest, "nep::train::rows");
  ensure_size(k.partial, std::max<int64_t>(k.n_blocks, 1) * k.P, "nep::train::partial");
  ensure_size(k.grad, k.P, "nep::train::grad");
  if (na > 0) Kokkos::parallel_for("nep::train::backward", Kokkos::RangePolicy<ExecSpace, TagBackward, PerAtomBounds>(im.exec, 0, na), k);
  Kokkos::parallel_for("nep::train::block_sum",
                       Kokkos::RangePolicy<ExecSpace, TagBlockSum, Kokkos::IndexType<int64_t>>(im.exec, 0, static_cast<int64_t>(k.n_blocks) * k.P), k);
  Kokkos::parallel_for("nep::train::param_sum", Kokkos::RangePolicy<ExecSpace, TagParamSum>(im.exec, 0, k.P), k);
  if (static_cast<int64_t>(im.out.extent(0)) < k.P) im.out = PView<double>("nep::train::out", k.P);
  Kokkos::deep_copy(im.exec, Kokkos::subview(im.out, std::make_pair(0, k.P)), Kokkos::subview(k.grad, std::make_pair(0, k.P)));
  im.exec.fence();
  std::memcpy(grad, im.out.data(), k.P * sizeof(double));
}

}  // namespace nep
