"""可交互图的引擎：滑块 (``slider``)、模型 (``explorable``)、局部重画 (``blit``)，
以及同一张图的两种滑块——有内核的 ``live``、没有内核的 ``static``。"""

from .explorable import FRAME_CAP, Explorable, View
from .slider import Slider

__all__ = ["Explorable", "FRAME_CAP", "Slider", "View"]
