/* ----------------------------------------------------------------------
   lammps-nep: fix nep/train's binary restart data (counters, metrics, the adopted model; mode
   active: its own state). The buffer file itself is reopened by init().
------------------------------------------------------------------------- */

#include "fix_nep_train.h"

#include "comm.h"
#include "error.h"

#include "fix_nep_train_impl.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace LAMMPS_NS;

namespace {
constexpr int kRestartVersion = 1;
constexpr int kScalarsInRestart = 14;
}    // namespace

// layout: kScalarsInRestart doubles, the model text; version 2 (mode active) then adds the number
// of active-mode scalars (a double), those scalars, the blob's size (a double) and the blob
void FixNEPTrain::write_restart(FILE *fp)
{
  std::vector<double> as;
  std::string blob;
  if (act) active_restart_pack(as, blob);    // collective (calibration pairs live on rank 0)
  if (comm->me != 0) return;
  double s[kScalarsInRestart] = {double(act ? 2 : kRestartVersion), double(frames), double(next_round_at),
                                 double(rejected), double(rounds), metrics[0], metrics[1], metrics[2], metrics[3],
                                 metrics[4], fresh_se, double(fresh_n), double(round_running ? 1 : 0),
                                 double(model_text.size())};
  size_t size = sizeof(s) + model_text.size();
  if (act) size += (2 + as.size()) * sizeof(double) + blob.size();
  const int isize = static_cast<int>(size);
  fwrite(&isize, sizeof(int), 1, fp);
  fwrite(s, sizeof(double), kScalarsInRestart, fp);
  if (!model_text.empty()) fwrite(model_text.data(), 1, model_text.size(), fp);
  if (act) {
    const double n = static_cast<double>(as.size()), nb = static_cast<double>(blob.size());
    fwrite(&n, sizeof(double), 1, fp);
    fwrite(as.data(), sizeof(double), as.size(), fp);
    fwrite(&nb, sizeof(double), 1, fp);
    if (!blob.empty()) fwrite(blob.data(), 1, blob.size(), fp);
  }
}

void FixNEPTrain::restart(char *buf)
{
  double s[kScalarsInRestart];
  memcpy(s, buf, sizeof(s));
  const int version = static_cast<int>(s[0]);
  if (version != kRestartVersion && version != 2)
    error->all(FLERR, "fix nep/train: restart data version {} is not supported (this build reads 1 and 2)", s[0]);
  if (version == 2 && !act)
    error->all(FLERR, "fix nep/train: the restart file holds a mode active fix; define it with 'mode active' again");
  restart_frames = static_cast<bigint>(s[1]);
  frames = restart_frames;
  next_round_at = static_cast<bigint>(s[2]);
  rejected = static_cast<bigint>(s[3]);
  rounds = static_cast<int>(s[4]);
  for (int k = 0; k < 5; ++k) metrics[k] = s[5 + k];
  fresh_se = s[10];
  fresh_n = static_cast<bigint>(s[11]);
  restart_round_running = s[12] != 0.0;
  model_text.assign(buf + sizeof(s), static_cast<size_t>(s[13]));
  if (version == 2) {
    const char *p = buf + sizeof(s) + model_text.size();
    double n = 0, nb = 0;
    memcpy(&n, p, sizeof(double));
    std::vector<double> as(static_cast<size_t>(n));
    memcpy(as.data(), p + sizeof(double), as.size() * sizeof(double));
    p += (1 + as.size()) * sizeof(double);
    memcpy(&nb, p, sizeof(double));
    active_restart_unpack(as.data(), std::string(p + sizeof(double), static_cast<size_t>(nb)));
  }
}

