"""Small 2D geometry helpers shared by the trajectory models."""
import numpy as np
import torch


def rotation_matrix(theta):
    """2x2 counter-clockwise rotation matrix for an angle in radians."""
    c, s = np.cos(theta), np.sin(theta)
    return torch.Tensor([[c, -s], [s, c]])


def rotate(points, theta):
    """Rotate (..., 2) points about the origin by theta radians."""
    R = rotation_matrix(theta).to(points.device, points.dtype)
    return points @ R.T


def to_agent_frame(traj):
    """Translate a (B, T, 2) history so the last observed position is the origin."""
    origin = traj[:, -1:, :]
    return traj - origin, origin
