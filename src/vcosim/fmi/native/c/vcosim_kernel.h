/* The compiled vehicle kernel's entry points (vcosim.fmi.native.kernel emits them). */
#ifndef VCOSIM_KERNEL_H
#define VCOSIM_KERNEL_H

#include <stdint.h>

/* model.advance: n physics steps of the state x with the held inputs u and the packed
   parameters p; y holds the last step's outputs, s is the step's scratch array; the terrain
   is a rows x cols grid of heights and friction factors, placed by grid[3]. One per x86-64
   level: the generic (SSE2) and v3 (AVX2), giving the same results to the last bit. */
typedef void vcosim_advance_fn(double *x, double *u, const double *p, double *y, double *s,
                               const double *height, const double *friction, int64_t rows,
                               int64_t cols, const double *grid, int64_t n);
vcosim_advance_fn vcosim_advance_x86_64;
vcosim_advance_fn vcosim_advance_x86_64_v3;

/* params.body_properties: out = mass, a, b, Ixx, Iyy, Izz (an inertia of 0: not given). */
void vcosim_body_properties(double chassis_mass, double engine_mass, double wheelbase,
                            double track, double plate_height, double roll_inertia,
                            double pitch_inertia, double yaw_inertia, double *out);

/* params.brake_torques: out = front, rear per-wheel torques (front_share < 0: none). */
void vcosim_brake_torques(double front, double rear, double front_share, double *out);

/* terrain.sample_terrain: out = height, dh/dx, dh/dy, friction at (x, y) of the grid. */
void vcosim_sample_terrain(const double *height, const double *friction, int64_t rows,
                           int64_t cols, const double *grid, double x, double y, double *out);

#endif
